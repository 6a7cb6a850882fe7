// Ops that only move values run on the integers when the DQ before them and the Q after them
// carry the same scale and zero point (extended), as ONNX Runtime's "drop QDQ" rules:
//   DQ(x, s, z) -> Reshape / Transpose / Squeeze / Unsqueeze / Flatten / Expand / Tile / Gather /
//   GatherElements / Slice / MaxPool (opset 12+) / ReduceMax / ReduceMin / Resize (nearest)
//   -> Q(s, z)  =>  the op on x, writing the Q's output.
// MaxPool, ReduceMax and ReduceMin need a positive scale (a negative one reverses the order).
// Resize only in "nearest" mode, as ONNX Runtime 1.31 (its optimized graphs keep the DQ and Q
// around a linear Resize).
// Split runs on the integers when every output is read only by a Q with the DQ's parameters
// (ORT's SplitSelector with equal parameters), and ArgMax reads a DQ's integers directly (ORT's
// "drop DQ" rule; Onyx also asks for a positive scale, which keeps the order of the values).
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
    if (!qdq::HasQdqNodes(ctx.editor)) return 0;
    int rewrites = 0;
    for (ir::Node* node : ctx.editor.Nodes()) {
      if (!qdq::Live(ctx.editor, node)) continue;  // removed by an earlier rewrite of this round
      if (IsOnnxOp(node, "DequantizeLinear", 10)) {
        rewrites += RemoveDequantizeQuantize(ctx, node);
      } else if (IsOnnxOp(node, "Split", 2)) {
        rewrites += DropAroundSplit(ctx, node);
      } else if (IsOnnxOp(node, "ArgMax", 1)) {
        rewrites += DropBeforeArgMax(ctx, node);
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

  static int DropAroundSplit(PassContext& ctx, ir::Node* split) {
    GraphEditor& editor = ctx.editor;
    QuantParams in;
    ir::Node* dq = qdq::DequantizeOf(editor, split->inputs.empty() ? std::string() : split->inputs[0], &in);
    if (dq == nullptr || split->outputs.empty()) return 0;
    for (size_t i = 1; i < split->inputs.size(); ++i)
      if (IsOnnxOp(editor.Producer(split->inputs[i]), "DequantizeLinear")) return 0;
    std::vector<ir::Node*> qs;
    for (const auto& out : split->outputs) {
      QuantParams p;
      ir::Node* q = out.empty() ? nullptr : qdq::SoleQuantizeReader(editor, out, &p);
      if (q == nullptr || !qdq::SameScalarParams(editor, in, p)) return 0;
      qs.push_back(q);
    }
    if (!CanRun(ctx, "Split", "", split->opset)) return 0;
    std::vector<std::string> inputs = split->inputs, outputs;
    inputs[0] = dq->inputs[0];
    for (ir::Node* q : qs) outputs.push_back(q->outputs[0]);
    const ir::Node original = *split;
    std::vector<ir::Node*> removed = qs;
    removed.push_back(split);
    RemoveAll(editor, removed);
    qdq::RemoveUnusedDequantizes(editor, {dq});
    ir::Node* moved = AddFusedNode(editor, "Split", "", original.opset, inputs, outputs);
    for (const auto& a : original.attributes) moved->attributes.push_back(a.Clone());
    ++ctx.counts["integer Split"];
    return 1;
  }

  static int DropBeforeArgMax(PassContext& ctx, ir::Node* argmax) {
    GraphEditor& editor = ctx.editor;
    if (argmax->inputs.size() != 1 || argmax->outputs.size() != 1) return 0;
    QuantParams in;
    ir::Node* dq = qdq::DequantizeOf(editor, argmax->inputs[0], &in);
    // The DQ read only here (ORT's node group), per tensor with a positive scale.
    if (dq == nullptr || SoleReader(editor, dq->outputs[0]) != argmax) return 0;
    auto scale = qdq::ScalarScale(editor, in);
    if (!scale || !(*scale > 0)) return 0;  // (DequantizeOf checked the zero point: a constant)
    editor.SetInput(argmax, 0, dq->inputs[0]);
    editor.RemoveNode(dq);
    ++ctx.counts["integer ArgMax"];
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
