#include "optimizer/passes/layer_norm_pattern.h"

#include "optimizer/fusion_util.h"
#include "optimizer/pattern_util.h"

namespace onyx::fusion {

std::optional<int64_t> TrailingReduceCount(GraphEditor& editor, const ir::Node& rm) {
  if (!IsOnnxOp(&rm, "ReduceMean") || rm.inputs.empty() || rm.outputs.size() != 1 || AttrInt(rm, "keepdims", 1) != 1)
    return std::nullopt;
  const auto* dims = editor.DimsOf(rm.inputs[0]);
  if (dims == nullptr || dims->empty()) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(dims->size());
  std::vector<int64_t> axes;
  if (rm.opset >= 18) {
    if (rm.inputs.size() < 2 || rm.inputs[1].empty()) return std::nullopt;
    auto v = ConstantInts(editor, rm, 1);
    if (!v) return std::nullopt;
    axes = *v;
  } else {
    axes = AttrInts(rm, "axes");
  }
  if (axes.empty()) return std::nullopt;  // all axes (or none): not a per-row normalization
  auto norm = NormalizeAxes(axes, rank);
  if (!norm) return std::nullopt;
  const int64_t k = static_cast<int64_t>(norm->size());
  for (int64_t i = 0; i < k; ++i)
    if ((*norm)[static_cast<size_t>(i)] != rank - k + i) return std::nullopt;
  return k;
}

std::optional<NormalizeMatch> MatchNormalize(GraphEditor& editor, const std::string& var, const std::string& d) {
  ir::Node* add = SoleReader(editor, var);
  if (!IsOnnxOp(add, "Add", 7) || add->inputs.size() != 2) return std::nullopt;
  auto eps = ConstScalar(editor, OtherInput(*add, var));
  if (!eps || *eps < 0 || RankOf(editor, OtherInput(*add, var)) > RankOf(editor, var)) return std::nullopt;
  ir::Node* sqrt = SoleReader(editor, add->outputs[0]);
  if (!IsOnnxOp(sqrt, "Sqrt")) return std::nullopt;
  ir::Node* next = SoleReader(editor, sqrt->outputs[0]);
  if (IsOnnxOp(next, "Div", 7) && next->inputs.size() == 2 && next->inputs[0] == d &&
      next->inputs[1] == sqrt->outputs[0])
    return NormalizeMatch{*eps, next->outputs[0], {add, sqrt, next}};
  if (IsOnnxOp(next, "Reciprocal")) {
    ir::Node* mul = SoleReader(editor, next->outputs[0]);
    if (IsOnnxOp(mul, "Mul", 7) && mul->inputs.size() == 2 && OtherInput(*mul, next->outputs[0]) == d)
      return NormalizeMatch{*eps, mul->outputs[0], {add, sqrt, next, mul}};
  }
  return std::nullopt;
}

std::optional<std::string> AffineOperand(GraphEditor& editor, const std::string& value, const std::vector<Dim>& dims,
                                         DataType dtype) {
  if (ElemType(editor, value) != dtype) return std::nullopt;
  if (auto t = ConstValue(editor, value)) {
    Shape shape = t->shape();
    while (shape.size() > dims.size() && shape.front() == 1) shape.erase(shape.begin());
    if (shape.size() != dims.size()) return std::nullopt;
    for (size_t i = 0; i < dims.size(); ++i)
      if (!dims[i].known() || dims[i].value != shape[i]) return std::nullopt;
    if (shape == t->shape()) return value;
    return editor.AddInitializer(value + "_reshaped", t->Reshaped(shape));
  }
  const auto* vd = editor.DimsOf(value);
  if (vd == nullptr || !SameDims(*vd, dims)) return std::nullopt;
  return value;
}

AffineMatch MatchAffine(GraphEditor& editor, const std::string& normalized, const std::vector<Dim>& dims,
                        DataType dtype) {
  AffineMatch m;
  m.output = normalized;
  ir::Node* mul = SoleReader(editor, normalized);
  if (IsOnnxOp(mul, "Mul", 7) && mul->inputs.size() == 2 && mul->inputs[0] != mul->inputs[1]) {
    if (auto scale = AffineOperand(editor, OtherInput(*mul, normalized), dims, dtype)) {
      m.scale = *scale;
      m.output = mul->outputs[0];
      m.nodes.push_back(mul);
    }
  }
  ir::Node* add = SoleReader(editor, m.output);
  if (IsOnnxOp(add, "Add", 7) && add->inputs.size() == 2 && add->inputs[0] != add->inputs[1]) {
    if (auto bias = AffineOperand(editor, OtherInput(*add, m.output), dims, dtype)) {
      m.bias = *bias;
      m.output = add->outputs[0];
      m.nodes.push_back(add);
    }
  }
  return m;
}

std::optional<std::string> FilledOperand(GraphEditor& editor, const std::vector<Dim>& dims, DataType dtype,
                                         double value, const std::string& hint) {
  Shape shape;
  for (const Dim& d : dims) {
    if (!d.known()) return std::nullopt;
    shape.push_back(d.value);
  }
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return editor.AddInitializer(hint, MakeFloatTensor(dtype, shape, std::vector<double>(static_cast<size_t>(n), value)));
}

}  // namespace onyx::fusion
