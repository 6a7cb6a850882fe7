#include "optimizer/passes/qdq_selectors.h"

#include "optimizer/fusion_util.h"
#include "optimizer/pattern_util.h"

namespace onyx::qdq {

using namespace fusion;

bool IsQuant8(DataType dt) { return dt == DataType::kUInt8 || dt == DataType::kInt8; }

namespace {

// The scale and zero point of a DQ/Q node: constant float scale, constant zero point of `type`
// with as many elements, no blocked quantization.
bool ReadParams(GraphEditor& editor, const ir::Node& node, DataType type, QuantParams* params) {
  if (node.inputs.size() < 2 || node.inputs.size() > 3 || node.outputs.size() != 1) return false;
  if (AttrInt(node, "block_size", 0) != 0) return false;
  if (!IsQuant8(type)) return false;
  auto scale = ConstValue(editor, node.inputs[1]);
  if (!scale || scale->dtype() != DataType::kFloat || scale->size() < 1 || scale->rank() > 1) return false;
  QuantParams p;
  p.scale = node.inputs[1];
  p.type = type;
  p.scale_size = scale->size();
  p.per_tensor = scale->size() == 1 && scale->rank() == 0;
  if (scale->rank() == 1 && scale->size() == 1) p.per_tensor = true;
  p.axis = AttrInt(node, "axis", 1);
  if (node.inputs.size() == 3 && !node.inputs[2].empty()) {
    auto zp = ConstValue(editor, node.inputs[2]);
    if (!zp || zp->dtype() != type || zp->size() != scale->size()) return false;
    if (zp->size() != 1 && zp->rank() != scale->rank()) return false;  // [1] and scalar mix; per-axis ones match
    p.zero_point = node.inputs[2];
  }
  *params = p;
  return true;
}

}  // namespace

ir::Node* DequantizeOf(GraphEditor& editor, const std::string& value, QuantParams* params) {
  if (value.empty()) return nullptr;
  ir::Node* dq = editor.Producer(value);
  if (!IsOnnxOp(dq, "DequantizeLinear", 10) || dq->inputs.empty()) return nullptr;
  // The zero point's type is the input's (ONNX requires it): no type inference needed then.
  DataType type = DataType::kUndefined;
  if (dq->inputs.size() == 3 && !dq->inputs[2].empty()) {
    auto zp = ConstValue(editor, dq->inputs[2]);
    if (!zp) return nullptr;
    type = zp->dtype();
  } else if (const Tensor* t = editor.Constant(dq->inputs[0])) {
    type = t->dtype();
  } else if (const ir::Node* q = editor.Producer(dq->inputs[0]); IsOnnxOp(q, "QuantizeLinear", 10)) {
    QuantParams qp;  // the Q's output type, without inferring the graph's types after each rewrite
    if (!ReadQuantize(editor, *q, &qp)) return nullptr;
    type = qp.type;
  } else {
    type = ElemType(editor, dq->inputs[0]);
  }
  QuantParams p;
  if (!ReadParams(editor, *dq, type, &p)) return nullptr;
  if (params != nullptr) *params = p;
  return dq;
}

bool ReadQuantize(GraphEditor& editor, const ir::Node& q, QuantParams* params) {
  if (!IsOnnxOp(&q, "QuantizeLinear", 10) || q.inputs.empty()) return false;
  DataType type = DataType::kUInt8;  // the default without a zero point
  if (q.inputs.size() == 3 && !q.inputs[2].empty()) {
    auto zp = ConstValue(editor, q.inputs[2]);
    if (!zp) return false;
    type = zp->dtype();
  } else if (const int64_t out = AttrInt(q, "output_dtype", 0); out != 0) {
    if (out == 3) type = DataType::kInt8;
    else if (out != 2) return false;
  }
  if (const int64_t out = AttrInt(q, "output_dtype", 0); out != 0 && out != (type == DataType::kInt8 ? 3 : 2))
    return false;
  QuantParams p;
  if (!ReadParams(editor, q, type, &p)) return false;
  if (params != nullptr) *params = p;
  return true;
}

ir::Node* SoleQuantizeReader(GraphEditor& editor, const std::string& value, QuantParams* params) {
  ir::Node* q = SoleReader(editor, value);
  if (q == nullptr || q->inputs.empty() || q->inputs[0] != value) return nullptr;
  if (!ReadQuantize(editor, *q, params)) return nullptr;
  return q;
}

bool Live(GraphEditor& editor, const ir::Node* node) {
  return node != nullptr && !node->outputs.empty() && !node->outputs[0].empty() && editor.Producer(node->outputs[0]) == node;
}

bool HasQdqNodes(const GraphEditor& editor) {
  for (const auto& node : editor.graph().nodes)
    if (node->domain.empty() && (node->op_type == "QuantizeLinear" || node->op_type == "DequantizeLinear")) return true;
  return false;
}

bool Unused(GraphEditor& editor, const std::string& value) { return editor.UseCount(value) == 0; }

std::optional<double> ScalarScale(GraphEditor& editor, const QuantParams& p) {
  if (!p.per_tensor) return std::nullopt;
  return ConstScalar(editor, p.scale);
}

bool SameScalarParams(GraphEditor& editor, const QuantParams& a, const QuantParams& b) {
  if (!a.per_tensor || !b.per_tensor || a.type != b.type) return false;
  auto sa = ConstValue(editor, a.scale), sb = ConstValue(editor, b.scale);
  if (!sa || !sb || sa->data<float>()[0] != sb->data<float>()[0]) return false;
  auto zp_value = [&](const QuantParams& p) -> std::optional<int> {
    if (p.zero_point.empty()) return 0;
    auto z = ConstValue(editor, p.zero_point);
    if (!z) return std::nullopt;
    return p.type == DataType::kUInt8 ? static_cast<int>(z->data<uint8_t>()[0]) : static_cast<int>(z->data<int8_t>()[0]);
  };
  auto za = zp_value(a), zb = zp_value(b);
  return za && zb && *za == *zb;
}

std::string ZeroPointOrZero(GraphEditor& editor, const QuantParams& p) {
  if (!p.zero_point.empty()) return p.zero_point;
  Tensor zero = p.type == DataType::kInt8 ? Tensor::Scalar<int8_t>(DataType::kInt8, 0)
                                          : Tensor::Scalar<uint8_t>(DataType::kUInt8, 0);
  return editor.AddInitializer(p.scale + "_zero_point", std::move(zero));
}

void RemoveUnusedDequantizes(GraphEditor& editor, const std::vector<ir::Node*>& dqs) {
  for (size_t i = 0; i < dqs.size(); ++i) {
    ir::Node* dq = dqs[i];
    if (dq == nullptr) continue;
    bool seen = false;  // a DQ feeding two inputs of the node appears twice
    for (size_t j = 0; j < i; ++j) seen = seen || dqs[j] == dq;
    if (!seen && Unused(editor, dq->outputs[0])) editor.RemoveNode(dq);
  }
}

void CopyAttributes(const ir::Node& from, ir::Node* to, const std::vector<std::string>& names) {
  for (const auto& name : names)
    if (const ir::Attribute* a = from.FindAttribute(name)) to->attributes.push_back(a->Clone());
}

}  // namespace onyx::qdq
