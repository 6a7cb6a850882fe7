// Ops that only move values run on the integers when the DQ before them and the Q after them
// carry the same scale and zero point (extended), as ONNX Runtime's "drop QDQ" rules:
//   DQ(x, s, z) -> Reshape / Transpose / Squeeze / Unsqueeze / Flatten / Expand / Tile / Gather /
//   GatherElements / Slice / MaxPool (opset 12+) / ReduceMax / ReduceMin / Resize (nearest)
//   -> Q(s, z)  =>  the op on x, writing the Q's output.
// MaxPool, ReduceMax and ReduceMin need a positive scale (a negative one reverses the order).
// Resize only in "nearest" mode (ORT drops the pair for every mode; an integer linear resize
// rounds differently from the float one, so Onyx keeps those float).
// And DQ -> Q pairs with equal constant scalar parameters (a round trip that changes nothing)
// are removed, as ORT's QDQFinalCleanupTransformer does; Q -> DQ pairs stay (removing them skips
// a rounding: ORT does it only with session.enable_quant_qdq_cleanup).
#include "optimizer/fusion_util.h"
#include "optimizer/pass.h"
#include "optimizer/passes/qdq_selectors.h"
#include "optimizer/pattern_util.h"

namespace onyx {
namespace {

using namespace fusion;
using qdq::QuantParams;

struct DropRule {
  const char* op;
  int min_opset;
  bool positive_scale;
};

const DropRule* FindRule(const ir::Node& node) {
  static const DropRule kRules[] = {
      {"Expand", 8, false},     {"Flatten", 1, false},   {"Gather", 1, false},   {"GatherElements", 11, false},
      {"Reshape", 5, false},    {"Slice", 10, false},    {"Squeeze", 1, false},  {"Tile", 6, false},
      {"Transpose", 1, false},  {"Unsqueeze", 1, false}, {"MaxPool", 12, true},  {"ReduceMax", 1, true},
      {"ReduceMin", 1, true},   {"Resize", 10, false},
  };
  if (!node.domain.empty()) return nullptr;
  for (const DropRule& r : kRules)
    if (node.op_type == r.op) return node.opset >= r.min_opset ? &r : nullptr;
  return nullptr;
}

class QdqDropFusion final : public Pass {
 public:
  std::string name() const override { return "QdqDropFusion"; }
  OptLevel level() const override { return OptLevel::kExtended; }
  std::vector<std::string> providers() const override { return {"CPU"}; }

  int Apply(PassContext& ctx) override {
    int rewrites = 0;
    for (ir::Node* node : ctx.editor.Nodes()) {
      if (!qdq::Live(ctx.editor, node)) continue;  // removed by an earlier rewrite of this round
      if (IsOnnxOp(node, "DequantizeLinear", 10)) {
        rewrites += RemoveDequantizeQuantize(ctx, node);
      } else if (const DropRule* rule = FindRule(*node)) {
        rewrites += Drop(ctx, node, *rule);
      }
    }
    return rewrites;
  }

 private:
  static int Drop(PassContext& ctx, ir::Node* node, const DropRule& rule) {
    GraphEditor& editor = ctx.editor;
    if (node->inputs.empty() || node->outputs.empty()) return 0;
    // Only the first output may exist (MaxPool's Indices must be omitted).
    for (size_t i = 1; i < node->outputs.size(); ++i)
      if (!node->outputs[i].empty()) return 0;
    if (node->op_type == "Resize" && AttrString(*node, "mode", "nearest") != "nearest") return 0;
    QuantParams in, out;
    ir::Node* dq = qdq::DequantizeOf(editor, node->inputs[0], &in);
    if (dq == nullptr) return 0;
    // One DQ parent, on the data input (ORT's selector counts DQ parents).
    for (size_t i = 1; i < node->inputs.size(); ++i)
      if (IsOnnxOp(editor.Producer(node->inputs[i]), "DequantizeLinear")) return 0;
    ir::Node* q = qdq::SoleQuantizeReader(editor, node->outputs[0], &out);
    if (q == nullptr || !qdq::SameScalarParams(editor, in, out)) return 0;
    if (rule.positive_scale) {
      auto s = qdq::ScalarScale(editor, in);
      if (!s || !(*s > 0)) return 0;
    }
    if (!CanRun(ctx, node->op_type, "", node->opset)) return 0;
    std::vector<std::string> inputs = node->inputs;
    inputs[0] = dq->inputs[0];
    const std::string result = q->outputs[0];
    const ir::Node original = *node;
    RemoveAll(editor, {node, q});
    qdq::RemoveUnusedDequantizes(editor, {dq});
    ir::Node* moved = AddFusedNode(editor, original.op_type, "", original.opset, inputs, {result});
    for (const auto& a : original.attributes) moved->attributes.push_back(a.Clone());
    ++ctx.counts["integer " + original.op_type];
    return 1;
  }

  // DQ -> Q with equal parameters: readers of the Q's output read the DQ's input.
  static int RemoveDequantizeQuantize(PassContext& ctx, ir::Node* dq) {
    GraphEditor& editor = ctx.editor;
    QuantParams in, out;
    if (qdq::DequantizeOf(editor, dq->outputs.empty() ? std::string() : dq->outputs[0], &in) != dq) return 0;
    ir::Node* q = qdq::SoleQuantizeReader(editor, dq->outputs[0], &out);
    if (q == nullptr || !qdq::SameScalarParams(editor, in, out)) return 0;
    // A Q output that is a graph output and also read by nodes stays (as ORT).
    const std::string q_out = q->outputs[0], source = dq->inputs[0];
    if (editor.IsGraphOutput(q_out) && !editor.Consumers(q_out).empty()) return 0;
    RemoveAll(editor, {dq, q});
    editor.ReplaceAllUses(q_out, source);
    ++ctx.counts["removed DequantizeLinear+QuantizeLinear"];
    return 1;
  }
};

ONYX_REGISTER_PASS(QdqDropFusion, 152);

}  // namespace
}  // namespace onyx
