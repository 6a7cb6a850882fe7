// Add(input, bias) + Softmax becomes com.microsoft.BiasSoftmax(input, bias) with ONNX Runtime's
// attributes (extended). Like ONNX Runtime, only for the CUDA provider: ONNX Runtime 1.30 has
// no CPU kernel for BiasSoftmax, so a CPU-optimized model must keep Add + Softmax (the
// attention fusion consumes most of them).
//
// With softmax axis k (the last axis from opset 13, when Softmax works on one axis), the dims
// from k on must match in both operands; the bias broadcasts over the dims before k either
// "inner" (the same rank, ones on a run of dims just before k: BERT's [B,1,1,S] mask on
// [B,N,S,S] scores; is_inner_broadcast = 1) or "outer" (ones, or missing, on the leading dims;
// is_inner_broadcast = 0).
#include "optimizer/fusion_util.h"
#include "optimizer/pass.h"
#include "optimizer/pattern_util.h"

namespace onyx {
namespace {

using namespace fusion;

struct Alignment {
  bool lhs_is_input = true;
  int64_t axis = 0;
  bool inner = false;
};

std::optional<Alignment> Align(const std::vector<Dim>& d1, const std::vector<Dim>& d2, int64_t axis, bool one_axis) {
  const int64_t n1 = static_cast<int64_t>(d1.size()), n2 = static_cast<int64_t>(d2.size());
  const int64_t rank = std::max(n1, n2);
  if (axis < -rank || axis >= rank) return std::nullopt;
  if (axis < 0) axis += rank;
  if (one_axis && axis != rank - 1) return std::nullopt;
  const int64_t tail = rank - axis;
  if (tail > n1 || tail > n2) return std::nullopt;
  for (int64_t i = 1; i <= tail; ++i)
    if (!SameDim(d1[n1 - i], d2[n2 - i])) return std::nullopt;
  Alignment a;
  a.axis = axis;
  if (n1 == n2) {
    int64_t pos = 0;  // the first dim before the axis where the operands differ
    while (pos < axis && SameDim(d1[pos], d2[pos])) ++pos;
    a.lhs_is_input = pos == axis || !DimIs(d1[pos], 1);
    const std::vector<Dim>& mask = a.lhs_is_input ? d2 : d1;
    bool inner = true;
    for (int64_t i = pos; i < axis; ++i)
      if (!DimIs(mask[i], 1)) inner = false;
    if (inner) {
      a.inner = true;
      return a;
    }
  }
  int64_t p1 = n1 - tail - 1, p2 = n2 - tail - 1;
  while (p1 >= 0 && p2 >= 0 && SameDim(d1[p1], d2[p2])) {
    --p1;
    --p2;
  }
  a.lhs_is_input = p1 > p2 || (p1 == p2 && (p1 < 0 || !DimIs(d1[p1], 1)));
  const std::vector<Dim>& mask = a.lhs_is_input ? d2 : d1;
  for (int64_t i = a.lhs_is_input ? p2 : p1; i >= 0; --i)
    if (!DimIs(mask[i], 1)) return std::nullopt;
  a.inner = false;
  return a;
}

class BiasSoftmaxFusion final : public Pass {
 public:
  std::string name() const override { return "BiasSoftmaxFusion"; }
  OptLevel level() const override { return OptLevel::kExtended; }
  std::vector<std::string> providers() const override { return {"CUDA"}; }

  int Apply(PassContext& ctx) override {
    GraphEditor& editor = ctx.editor;
    int rewrites = 0;
    if (!CanRun(ctx, "BiasSoftmax", kMsDomain, 1)) return 0;
    for (ir::Node* softmax : editor.NodesOfType("Softmax")) {
      if (softmax->inputs.size() != 1 || softmax->outputs.size() != 1) continue;
      ir::Node* add = editor.Producer(softmax->inputs[0]);
      if (!IsOnnxOp(add, "Add", 7) || add->inputs.size() != 2 || SoleReader(editor, add->outputs[0]) != softmax)
        continue;
      const DataType dt = ElemType(editor, add->inputs[0]);
      if (!TypeIn(dt, {DataType::kFloat, DataType::kFloat16, DataType::kDouble}) ||
          ElemType(editor, add->inputs[1]) != dt)
        continue;
      const auto* d1 = editor.DimsOf(add->inputs[0]);
      const auto* d2 = editor.DimsOf(add->inputs[1]);
      if (d1 == nullptr || d2 == nullptr || d1->empty() || d2->empty()) continue;
      const bool one_axis = softmax->opset >= 13;
      auto a = Align(*d1, *d2, AttrInt(*softmax, "axis", one_axis ? -1 : 1), one_axis);
      if (!a) continue;
      const std::string input = add->inputs[a->lhs_is_input ? 0 : 1];
      const std::string bias = add->inputs[a->lhs_is_input ? 1 : 0];
      const std::string out = softmax->outputs[0];
      RemoveAll(editor, {add, softmax});
      AddFusedNode(editor, "BiasSoftmax", kMsDomain, 1, {input, bias}, {out})->attributes = {
          IntAttr("axis", a->axis), IntAttr("is_inner_broadcast", a->inner ? 1 : 0)};
      ++ctx.counts["com.microsoft.BiasSoftmax"];
      ++rewrites;
    }
    return rewrites;
  }
};

ONYX_REGISTER_PASS(BiasSoftmaxFusion, 540);

}  // namespace
}  // namespace onyx
