// Add(input, skip) [with input = Add(x, bias)] feeding a normalization over the last axis
// becomes one node (extended):
//   LayerNormalization           -> com.microsoft.SkipLayerNormalization(input, skip, gamma, beta, bias)
//   SimplifiedLayerNormalization -> com.microsoft.SkipSimplifiedLayerNormalization(input, skip, gamma, bias)
// Input and skip are 2-D or 3-D of the same dims (or a 3-D input with a [1, S, H] or [S, H]
// skip), gamma/beta/bias 1-D of the hidden size. When the sum is also read elsewhere (pre-LN
// transformers keep it as the residual), the fused node's 4th output, input_skip_bias_sum,
// carries it.
#include "optimizer/fusion_util.h"
#include "optimizer/pass.h"
#include "optimizer/pattern_util.h"

namespace onyx {
namespace {

using namespace fusion;

// Whether `value` is 1-D with the hidden size.
bool IsHiddenVector(GraphEditor& editor, const std::string& value, const Dim& hidden, DataType dt) {
  const auto* d = editor.DimsOf(value);
  return d != nullptr && d->size() == 1 && SameDim((*d)[0], hidden) && ElemType(editor, value) == dt;
}

// A skip that broadcasts against a 3-D input: [1, S, H] or [S, H].
bool IsBroadcastSkip(const std::vector<Dim>& skip, const std::vector<Dim>& sum) {
  if (sum.size() != 3) return false;
  if (skip.size() == 3) return DimIs(skip[0], 1) && SameDim(skip[1], sum[1]) && SameDim(skip[2], sum[2]);
  return skip.size() == 2 && SameDim(skip[0], sum[1]) && SameDim(skip[1], sum[2]);
}

class SkipLayerNormFusion final : public Pass {
 public:
  std::string name() const override { return "SkipLayerNormFusion"; }
  OptLevel level() const override { return OptLevel::kExtended; }
  std::vector<std::string> providers() const override { return {"CPU"}; }

  int Apply(PassContext& ctx) override {
    GraphEditor& editor = ctx.editor;
    int rewrites = 0;
    std::vector<ir::Node*> anchors = editor.NodesOfType("LayerNormalization");
    for (ir::Node* n : editor.NodesOfType("SimplifiedLayerNormalization")) anchors.push_back(n);
    // Types from before the first rewrite: a rewrite keeps the types of the values it leaves.
    const auto frozen = editor.FreezeTypes();
    for (ir::Node* ln : anchors) {
      const bool simplified = ln->op_type == "SimplifiedLayerNormalization";
      if (!CanRun(ctx, simplified ? "SkipSimplifiedLayerNormalization" : "SkipLayerNormalization", kMsDomain, 1))
        continue;
      if (ln->inputs.size() < 2 || ln->outputs.empty() || ln->outputs[0].empty() || !OnlyFirstOutputUsed(editor, *ln))
        continue;
      const std::string sum = ln->inputs[0];
      ir::Node* add = editor.Producer(sum);
      if (!IsOnnxOp(add, "Add", 7) || add->inputs.size() != 2 || add->inputs[0] == add->inputs[1]) continue;
      const auto* sum_dims_ptr = editor.DimsOf(sum);
      if (sum_dims_ptr == nullptr || (sum_dims_ptr->size() != 2 && sum_dims_ptr->size() != 3)) continue;
      const std::vector<Dim> sum_dims = *sum_dims_ptr;
      const int64_t rank = static_cast<int64_t>(sum_dims.size());
      const int64_t axis = AttrInt(*ln, "axis", -1);
      if (axis != -1 && axis != rank - 1) continue;
      const Dim hidden = sum_dims.back();
      const DataType dt = ElemType(editor, sum);
      if (!TypeIn(dt, {DataType::kFloat, DataType::kFloat16})) continue;
      const std::string gamma = ln->inputs[1];
      const std::string beta = !simplified && ln->inputs.size() > 2 ? ln->inputs[2] : "";
      if (!IsHiddenVector(editor, gamma, hidden, dt) || (!beta.empty() && !IsHiddenVector(editor, beta, hidden, dt)))
        continue;
      // Which operand is the input (of the sum's dims) and which the skip.
      std::string input, skip;
      for (int side = 0; side < 2 && input.empty(); ++side) {
        const std::string& a = add->inputs[side];
        const std::string& b = add->inputs[1 - side];
        const auto* ad = editor.DimsOf(a);
        const auto* bd = editor.DimsOf(b);
        if (ad == nullptr || bd == nullptr) continue;
        if (ElemType(editor, a) != dt || ElemType(editor, b) != dt) continue;
        if (!SameDims(*ad, sum_dims)) continue;
        if (SameDims(*bd, sum_dims) || IsBroadcastSkip(*bd, sum_dims)) {
          input = a;
          skip = b;
        }
      }
      if (input.empty()) continue;
      // A bias added to either full-size operand goes in as SkipLayerNormalization's bias.
      std::string bias;
      ir::Node* bias_add = nullptr;
      for (const std::string* operand : {&input, &skip}) {
        const auto* od = editor.DimsOf(*operand);
        ir::Node* p = editor.Producer(*operand);
        if (od == nullptr || !SameDims(*od, sum_dims) || !IsOnnxOp(p, "Add", 7) || p->inputs.size() != 2) continue;
        if (SoleReader(editor, *operand) != add) continue;
        for (int s = 0; s < 2 && bias.empty(); ++s) {
          const std::string& x = p->inputs[1 - s];
          const auto* xd = editor.DimsOf(x);
          if (xd == nullptr || !SameDims(*xd, sum_dims) || !IsHiddenVector(editor, p->inputs[s], hidden, dt)) continue;
          bias = p->inputs[s];
          bias_add = p;
          if (operand == &skip) skip = input;  // the biased operand becomes the input
          input = x;
        }
        if (!bias.empty()) break;
      }
      const float eps = AttrFloat(*ln, "epsilon", 1e-5f);
      const bool sum_read_elsewhere = editor.IsGraphOutput(sum) || editor.Consumers(sum).size() > 1;
      std::vector<std::string> outputs = {ln->outputs[0]};
      if (sum_read_elsewhere) outputs = {ln->outputs[0], "", "", sum};
      std::vector<std::string> inputs = {input, skip, gamma};
      if (!simplified) inputs.push_back(beta);
      inputs.push_back(bias);
      std::vector<ir::Node*> removed = {add, ln};
      if (bias_add != nullptr) removed.push_back(bias_add);
      RemoveAll(editor, removed);
      const char* op = simplified ? "SkipSimplifiedLayerNormalization" : "SkipLayerNormalization";
      AddFusedNode(editor, op, kMsDomain, 1, inputs, outputs)->attributes = {FloatAttr("epsilon", eps)};
      ++ctx.counts[std::string("com.microsoft.") + op];
      ++rewrites;
    }
    return rewrites;
  }
};

ONYX_REGISTER_PASS(SkipLayerNormFusion, 520);

}  // namespace
}  // namespace onyx
