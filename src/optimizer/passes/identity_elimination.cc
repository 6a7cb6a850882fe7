// Removes nodes that pass their input through unchanged (basic): Identity, inference-mode
// Dropout (its mask output unused), and Cast to the type the input already has.
#include "optimizer/pass.h"

namespace onyx {
namespace {

class IdentityElimination final : public Pass {
 public:
  std::string name() const override { return "IdentityElimination"; }
  OptLevel level() const override { return OptLevel::kBasic; }

  int Apply(PassContext& ctx) override {
    GraphEditor& editor = ctx.editor;
    int removed = 0;
    for (ir::Node* node : editor.Nodes()) {
      if (!node->domain.empty() || node->inputs.empty() || node->inputs[0].empty()) continue;
      if (!PassesThrough(*node, editor)) continue;
      const std::string in = node->inputs[0];
      const std::string out = node->outputs[0];
      // An outer value or graph input feeding a graph output directly needs the node.
      if (editor.IsGraphOutput(out) && (editor.IsGraphOutput(in) || !editor.Producer(in))) continue;
      editor.RemoveNode(node);
      editor.ReplaceAllUses(out, in);
      ++ctx.counts["removed " + node->op_type];
      ++removed;
    }
    return removed;
  }

 private:
  static bool PassesThrough(const ir::Node& node, const GraphEditor& editor) {
    if (node.op_type == "Identity") return node.outputs.size() == 1 && node.inputs.size() == 1;
    if (node.op_type == "Dropout") {
      // Dropout is the identity at inference unless training_mode is a true constant.
      if (node.outputs.size() > 1 && !node.outputs[1].empty()) return false;
      if (node.inputs.size() >= 3 && !node.inputs[2].empty()) {
        const Tensor* training = editor.Constant(node.inputs[2]);
        if (training == nullptr || training->size() != 1 || training->data<bool>()[0]) return false;
      }
      return true;
    }
    return false;
  }
};

ONYX_REGISTER_PASS(IdentityElimination, 50);

}  // namespace
}  // namespace onyx
