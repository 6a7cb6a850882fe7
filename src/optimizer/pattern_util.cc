#include "optimizer/pattern_util.h"

#include "base/float_types.h"

namespace onyx {

std::optional<std::vector<int64_t>> IntsOf(const Tensor& t) {
  std::vector<int64_t> v(static_cast<size_t>(t.size()));
  if (t.dtype() == DataType::kInt64) {
    for (int64_t i = 0; i < t.size(); ++i) v[i] = t.data<int64_t>()[i];
  } else if (t.dtype() == DataType::kInt32) {
    for (int64_t i = 0; i < t.size(); ++i) v[i] = t.data<int32_t>()[i];
  } else {
    return std::nullopt;
  }
  return v;
}

std::optional<std::vector<int64_t>> ConstantInts(GraphEditor& editor, const ir::Node& node, size_t input) {
  if (input >= node.inputs.size() || node.inputs[input].empty()) return std::nullopt;
  const Tensor* t = editor.Constant(node.inputs[input]);
  if (t == nullptr) return std::nullopt;
  return IntsOf(*t);
}

std::optional<double> ConstantScalar(GraphEditor& editor, const std::string& value) {
  const Tensor* t = editor.Constant(value);
  if (t == nullptr || t->size() != 1) return std::nullopt;
  switch (t->dtype()) {
    case DataType::kFloat: return t->data<float>()[0];
    case DataType::kDouble: return t->data<double>()[0];
    case DataType::kFloat16: return HalfBitsToFloat(t->data<uint16_t>()[0]);
    case DataType::kInt64: return static_cast<double>(t->data<int64_t>()[0]);
    case DataType::kInt32: return t->data<int32_t>()[0];
    default: return std::nullopt;
  }
}

int64_t AttrInt(const ir::Node& node, const std::string& name, int64_t fallback) {
  const ir::Attribute* a = node.FindAttribute(name);
  return a && a->type == ir::AttrType::kInt ? a->i : fallback;
}

float AttrFloat(const ir::Node& node, const std::string& name, float fallback) {
  const ir::Attribute* a = node.FindAttribute(name);
  return a && a->type == ir::AttrType::kFloat ? a->f : fallback;
}

std::vector<int64_t> AttrInts(const ir::Node& node, const std::string& name) {
  const ir::Attribute* a = node.FindAttribute(name);
  return a && a->type == ir::AttrType::kInts ? a->ints : std::vector<int64_t>{};
}

std::string AttrString(const ir::Node& node, const std::string& name, const std::string& fallback) {
  const ir::Attribute* a = node.FindAttribute(name);
  return a && a->type == ir::AttrType::kString ? a->s : fallback;
}

std::optional<Shape> StaticShape(GraphEditor& editor, const std::string& value) {
  const auto* dims = editor.DimsOf(value);
  return dims == nullptr ? std::nullopt : StaticShape(*dims);
}

std::optional<Shape> StaticShape(const std::vector<Dim>& dims) {
  Shape s;
  for (const auto& d : dims) {
    if (!d.known()) return std::nullopt;
    s.push_back(d.value);
  }
  return s;
}

bool IsOp(const ir::Node* node, const char* op_type, const char* domain) {
  return node != nullptr && node->op_type == op_type && node->domain == domain;
}

ir::Node* SoleConsumer(GraphEditor& editor, const std::string& value) {
  const auto& users = editor.Consumers(value);
  if (users.size() != 1 || editor.IsGraphOutput(value)) return nullptr;
  return users[0];
}

}  // namespace onyx
