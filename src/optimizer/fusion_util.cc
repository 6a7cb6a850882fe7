#include "optimizer/fusion_util.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "base/aligned_memory.h"
#include "base/check.h"
#include "base/float_types.h"
#include "providers/kernel.h"
#include "tensor/small_page_allocator.h"

namespace onyx::fusion {
namespace {

int64_t AttrIntOr(const ir::Node& node, const char* name, int64_t fallback) {
  const ir::Attribute* a = node.FindAttribute(name);
  return a && a->type == ir::AttrType::kInt ? a->i : fallback;
}

// A Constant node's value attribute as a tensor (value, value_float(s), value_int(s)).
std::optional<Tensor> ConstantNodeValue(const ir::Node& node) {
  if (node.op_type != "Constant" || !node.domain.empty() || node.attributes.size() != 1) return std::nullopt;
  const ir::Attribute& a = node.attributes[0];
  if (a.name == "value" && a.type == ir::AttrType::kTensor) return a.t;
  if (a.name == "value_float" && a.type == ir::AttrType::kFloat) return Tensor::Scalar<float>(DataType::kFloat, a.f);
  if (a.name == "value_int" && a.type == ir::AttrType::kInt) return Tensor::Scalar<int64_t>(DataType::kInt64, a.i);
  if (a.name == "value_floats" && a.type == ir::AttrType::kFloats)
    return Tensor::FromVector<float>(DataType::kFloat, {static_cast<int64_t>(a.floats.size())}, a.floats);
  if (a.name == "value_ints" && a.type == ir::AttrType::kInts)
    return Tensor::FromVector<int64_t>(DataType::kInt64, {static_cast<int64_t>(a.ints.size())}, a.ints);
  return std::nullopt;
}

// Calls fn(m, value as double) for each of W's elements, output channel m by m; fn's return value,
// when it has one, is stored back rounded to W's type (float, double or float16).
template <typename Fn>
void ForEachWeight(const Tensor& w, int64_t channels, Tensor* out, Fn&& fn) {
  const int64_t per_channel = w.size() / channels;
  auto each = [&](auto read, auto write) {
    for (int64_t m = 0; m < channels; ++m)
      for (int64_t k = 0; k < per_channel; ++k) {
        const int64_t i = m * per_channel + k;
        if constexpr (std::is_void_v<decltype(fn(m, read(i)))>) {
          fn(m, read(i));
        } else {
          write(i, fn(m, read(i)));
        }
      }
  };
  switch (w.dtype()) {
    case DataType::kFloat:
      each([&](int64_t i) { return static_cast<double>(w.data<float>()[i]); },
           [&](int64_t i, double v) { out->data<float>()[i] = static_cast<float>(v); });
      break;
    case DataType::kDouble:
      each([&](int64_t i) { return w.data<double>()[i]; }, [&](int64_t i, double v) { out->data<double>()[i] = v; });
      break;
    case DataType::kFloat16:
      each([&](int64_t i) { return static_cast<double>(HalfBitsToFloat(w.data<uint16_t>()[i])); },
           [&](int64_t i, double v) { out->data<uint16_t>()[i] = FloatToHalfBits(static_cast<float>(v)); });
      break;
    default:
      ONYX_THROW(kInvalidArgument, "Conv weights of type ", DataTypeName(w.dtype()), " cannot be folded into");
  }
}

}  // namespace

std::optional<Tensor> ConstValue(GraphEditor& editor, const std::string& value) {
  if (value.empty()) return std::nullopt;
  if (const Tensor* t = editor.Constant(value)) return *t;
  if (const ir::Node* p = editor.Producer(value)) return ConstantNodeValue(*p);
  return std::nullopt;
}

std::optional<std::vector<double>> ConstDoubles(GraphEditor& editor, const std::string& value) {
  auto t = ConstValue(editor, value);
  if (!t) return std::nullopt;
  std::vector<double> v(static_cast<size_t>(t->size()));
  for (int64_t i = 0; i < t->size(); ++i) {
    switch (t->dtype()) {
      case DataType::kFloat:
        v[i] = t->data<float>()[i];
        break;
      case DataType::kDouble:
        v[i] = t->data<double>()[i];
        break;
      case DataType::kFloat16:
        v[i] = HalfBitsToFloat(t->data<uint16_t>()[i]);
        break;
      case DataType::kBFloat16:
        v[i] = BFloat16BitsToFloat(t->data<uint16_t>()[i]);
        break;
      case DataType::kInt64:
        v[i] = static_cast<double>(t->data<int64_t>()[i]);
        break;
      case DataType::kInt32:
        v[i] = t->data<int32_t>()[i];
        break;
      default:
        return std::nullopt;
    }
  }
  return v;
}

std::optional<double> ConstScalar(GraphEditor& editor, const std::string& value) {
  auto v = ConstDoubles(editor, value);
  if (!v || v->size() != 1) return std::nullopt;
  return (*v)[0];
}

bool SameConstScalar(GraphEditor& editor, const std::string& a, const std::string& b) {
  if (a == b) return true;
  const Tensor* x = editor.Constant(a);
  const Tensor* y = editor.Constant(b);
  return x != nullptr && y != nullptr && x->dtype() == y->dtype() && x->size() == 1 && y->size() == 1 &&
         std::memcmp(x->raw_data(), y->raw_data(), static_cast<size_t>(x->byte_size())) == 0;
}

bool IsConstNear(GraphEditor& editor, const std::string& value, double expected, double rel_tol) {
  auto v = ConstScalar(editor, value);
  return v && std::fabs(*v - expected) <= rel_tol * std::max(std::fabs(expected), 1e-30);
}

int64_t RankOf(GraphEditor& editor, const std::string& value) {
  if (auto t = ConstValue(editor, value)) return static_cast<int64_t>(t->rank());
  const auto* dims = editor.DimsOf(value);
  return dims ? static_cast<int64_t>(dims->size()) : -1;
}

DataType ElemType(GraphEditor& editor, const std::string& value) {
  // A constant's own dtype: type inference reruns over the whole graph after each edit, and a
  // QDQ fusion asking for each int32 bias's type made it a fifth of a YOLO's creation.
  if (const Tensor* c = editor.Constant(value)) return c->dtype();
  const TypeInfo* t = editor.TypeOf(value);
  if (t == nullptr || t->kind != TypeInfo::Kind::kTensor) return DataType::kUndefined;
  return t->elem_type;
}

bool TypeIn(DataType t, std::initializer_list<DataType> allowed) {
  return t != DataType::kUndefined && std::find(allowed.begin(), allowed.end(), t) != allowed.end();
}

DataType SnapshotElemType(const TypeMap& types, const std::string& value) {
  const auto it = types.find(value);
  if (it == types.end() || it->second->kind != TypeInfo::Kind::kTensor) return DataType::kUndefined;
  return it->second->elem_type;
}

const std::vector<Dim>* SnapshotDims(const TypeMap& types, const std::string& value) {
  const auto it = types.find(value);
  if (it == types.end() || it->second->kind != TypeInfo::Kind::kTensor || !it->second->shape) return nullptr;
  return &*it->second->shape;
}

bool SameDim(const Dim& a, const Dim& b) {
  if (a.known() || b.known()) return a.known() && b.known() && a.value == b.value;
  return !a.param.empty() && a.param == b.param;
}

bool SameDims(const std::vector<Dim>& a, const std::vector<Dim>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!SameDim(a[i], b[i])) return false;
  return true;
}

bool DimIs(const Dim& d, int64_t value) { return d.known() && d.value == value; }

std::optional<Dim> LastDim(GraphEditor& editor, const std::string& value) {
  if (const auto* dims = editor.DimsOf(value)) {
    if (dims->empty()) return std::nullopt;
    return dims->back();
  }
  const ir::Node* p = editor.Producer(value);
  if (p == nullptr || p->inputs.size() < 2) return std::nullopt;
  bool trans_b = false;
  if (IsOnnxOp(p, "Gemm"))
    trans_b = AttrIntOr(*p, "transB", 0) != 0;
  else if (p->domain == kMsDomain && p->op_type == "FusedMatMul")
    trans_b = AttrIntOr(*p, "transB", 0) != 0;
  else if (!IsOnnxOp(p, "MatMul"))
    return std::nullopt;
  auto w = ConstValue(editor, p->inputs[1]);
  if (!w || w->rank() != 2) return std::nullopt;
  return Dim{w->dim(trans_b ? 0 : 1), ""};
}

bool IsOnnxOp(const ir::Node* node, const char* op_type, int min_opset) {
  return node != nullptr && node->domain.empty() && node->op_type == op_type && node->opset >= min_opset &&
         !node->outputs.empty() && !node->outputs[0].empty();
}

int InputIndex(const ir::Node& node, const std::string& value) {
  for (size_t i = 0; i < node.inputs.size(); ++i)
    if (node.inputs[i] == value) return static_cast<int>(i);
  return -1;
}

const std::string& OtherInput(const ir::Node& node, const std::string& value) {
  static const std::string kNone;
  if (node.inputs.size() != 2) return kNone;
  if (node.inputs[0] == value) return node.inputs[1];
  if (node.inputs[1] == value) return node.inputs[0];
  return kNone;
}

bool OnlyReadBy(GraphEditor& editor, const std::string& value, const std::vector<ir::Node*>& allowed) {
  if (value.empty() || editor.IsGraphOutput(value)) return false;
  for (ir::Node* reader : editor.Consumers(value))
    if (std::find(allowed.begin(), allowed.end(), reader) == allowed.end()) return false;
  return true;
}

ir::Node* SoleReader(GraphEditor& editor, const std::string& value) {
  if (value.empty() || editor.IsGraphOutput(value)) return nullptr;
  const auto& readers = editor.Consumers(value);
  return readers.size() == 1 ? readers[0] : nullptr;
}

bool OnlyFirstOutputUsed(GraphEditor& editor, const ir::Node& node) {
  for (size_t i = 1; i < node.outputs.size(); ++i)
    if (!node.outputs[i].empty() && editor.UseCount(node.outputs[i]) > 0) return false;
  return true;
}

ir::Attribute IntAttr(const std::string& name, int64_t v) {
  ir::Attribute a{name, ir::AttrType::kInt};
  a.i = v;
  return a;
}

ir::Attribute FloatAttr(const std::string& name, float v) {
  ir::Attribute a{name, ir::AttrType::kFloat};
  a.f = v;
  return a;
}

ir::Attribute StringAttr(const std::string& name, const std::string& v) {
  ir::Attribute a{name, ir::AttrType::kString};
  a.s = v;
  return a;
}

ir::Attribute FloatsAttr(const std::string& name, std::vector<float> v) {
  ir::Attribute a{name, ir::AttrType::kFloats};
  a.floats = std::move(v);
  return a;
}

Tensor MakeFloatTensor(DataType dtype, const Shape& shape, const std::vector<double>& values) {
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.size(); ++i) {
    const double v = values[static_cast<size_t>(i)];
    switch (dtype) {
      case DataType::kFloat:
        t.data<float>()[i] = static_cast<float>(v);
        break;
      case DataType::kDouble:
        t.data<double>()[i] = v;
        break;
      case DataType::kFloat16:
        t.data<uint16_t>()[i] = FloatToHalfBits(static_cast<float>(v));
        break;
      case DataType::kBFloat16:
        t.data<uint16_t>()[i] = FloatToBFloat16Bits(static_cast<float>(v));
        break;
      default:
        ONYX_THROW(kInvalidArgument, "MakeFloatTensor: ", DataTypeName(dtype), " is not a float type");
    }
  }
  return t;
}

bool CanRun(const PassContext& ctx, const std::string& op_type, const std::string& domain, int opset) {
  if (!ctx.options.require_kernels) return true;
  for (const auto& provider : ctx.options.providers)
    if (KernelRegistry::Global().Find(provider, domain, op_type, opset) != nullptr) return true;
  return false;
}

ir::Node* AddFusedNode(GraphEditor& editor, const std::string& op_type, const std::string& domain, int opset,
                       std::vector<std::string> inputs, std::vector<std::string> outputs) {
  // Trailing omitted optional inputs are dropped: "" only where a later input is given.
  while (!inputs.empty() && inputs.back().empty()) inputs.pop_back();
  ir::Node* node = editor.AddNode(op_type, domain, std::move(inputs), std::move(outputs), op_type + "_fused");
  node->opset = opset;
  return node;
}

void RemoveAll(GraphEditor& editor, const std::vector<ir::Node*>& nodes) {
  for (ir::Node* n : nodes) editor.RemoveNode(n);
}

std::optional<std::vector<double>> PerChannelValues(GraphEditor& editor, const std::string& value, int64_t rank,
                                                    int64_t channels) {
  auto t = ConstValue(editor, value);
  if (!t || static_cast<int64_t>(t->rank()) > rank) return std::nullopt;
  auto values = ConstDoubles(editor, value);
  if (!values) return std::nullopt;
  const int64_t offset = rank - static_cast<int64_t>(t->rank());  // output axis of the tensor's dim 0
  bool per_channel = false;
  for (int64_t j = 0; j < static_cast<int64_t>(t->rank()); ++j) {
    const int64_t d = t->dim(static_cast<size_t>(j));
    if (j + offset == 1 && d == channels && channels != 1)
      per_channel = true;
    else if (d != 1)
      return std::nullopt;
  }
  if (per_channel) return values;
  return std::vector<double>(static_cast<size_t>(channels), (*values)[0]);
}

std::optional<ConvParams> ReadConvParams(GraphEditor& editor, const ir::Node& conv) {
  if (conv.inputs.size() < 2) return std::nullopt;
  auto w = ConstValue(editor, conv.inputs[1]);
  if (!w || w->rank() < 3 || !TypeIn(w->dtype(), {DataType::kFloat, DataType::kDouble, DataType::kFloat16}))
    return std::nullopt;
  ConvParams p;
  p.w = *w;
  p.channels = w->dim(0);
  if (p.channels <= 0) return std::nullopt;
  p.scale.assign(static_cast<size_t>(p.channels), 1.0);
  if (conv.inputs.size() > 2 && !conv.inputs[2].empty()) {
    auto b = ConstValue(editor, conv.inputs[2]);
    if (!b || b->dtype() != w->dtype() || b->rank() != 1 || b->dim(0) != p.channels) return std::nullopt;
    p.bias = *ConstDoubles(editor, conv.inputs[2]);
  } else {
    p.bias.assign(static_cast<size_t>(p.channels), 0.0);
  }
  return p;
}

std::vector<double> ConvParams::WeightSums() const {
  std::vector<double> sums(static_cast<size_t>(channels), 0.0);
  ForEachWeight(w, channels, nullptr, [&](int64_t m, double v) { sums[static_cast<size_t>(m)] += v; });
  return sums;
}

namespace {

// Whether the fold may write W's new values over its old ones: W is a copy the loader made on
// pages of Onyx's own (its bytes misaligned in the file), an initializer of this graph read by
// this Conv alone, and its storage is held by nothing but that initializer and `w`. The fresh
// buffer it saves is as large as the weights, and on a VM each fresh page costs a host fault
// (ResNet-50: 74 of its 95 MB of folded weights).
bool CanFoldInPlace(GraphEditor& editor, const ir::Node& conv, const Tensor& w) {
  const std::string& name = conv.inputs[1];
  const ir::Graph& graph = editor.graph();
  const Tensor* initializer = graph.FindInitializer(name);
  return initializer != nullptr && initializer->raw_data() == w.raw_data() && initializer->SharesStorageWith(w) &&
         w.holder().use_count() == 2 && !graph.IsGraphInput(name) && editor.UseCount(name) == 1 &&
         w.device().type == DeviceType::kCpu && IsOwnSmallPageMapping(w.raw_data());
}

}  // namespace

void SetConvParams(GraphEditor& editor, ir::Node* conv, const ConvParams& p, const std::string& tag,
                   bool weights_changed) {
  const DataType dt = p.w.dtype();
  if (weights_changed) {
    // In place, each weight is read before its own slot is written, as into a new tensor. A new
    // one goes on small pages, as the loader's copies do: kernels pack it and the session drops
    // it, and a fresh huge page costs a VM far more (base/aligned_memory.h).
    Tensor scaled = CanFoldInPlace(editor, *conv, p.w) ? p.w : Tensor(dt, p.w.shape(), CpuSmallPageAllocator());
    ForEachWeight(p.w, p.channels, &scaled, [&](int64_t m, double v) { return v * p.scale[static_cast<size_t>(m)]; });
    const std::string w = conv->inputs[1] + "_" + tag;
    editor.SetInput(conv, 1, editor.AddInitializer(w, std::move(scaled)));
  }
  const std::string b = conv->name + "_" + tag + "_bias";
  editor.SetInput(conv, 2, editor.AddInitializer(b, MakeFloatTensor(dt, {p.channels}, p.bias)));
}

std::optional<std::vector<int64_t>> NormalizeAxes(const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    if (a < -rank || a >= rank) return std::nullopt;
    const int64_t n = a < 0 ? a + rank : a;
    if (std::find(out.begin(), out.end(), n) != out.end()) return std::nullopt;
    out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace onyx::fusion
