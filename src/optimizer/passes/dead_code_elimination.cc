// Removes nodes none of whose outputs is read or is a graph output (basic). Nodes with
// side effects do not exist in ONNX inference graphs, so any unread node can go.
#include "optimizer/pass.h"

namespace onyx {
namespace {

class DeadCodeElimination final : public Pass {
 public:
  std::string name() const override { return "DeadCodeElimination"; }
  OptLevel level() const override { return OptLevel::kBasic; }

  int Apply(PassContext& ctx) override {
    GraphEditor& editor = ctx.editor;
    int removed = 0;
    // Walk backwards so a chain of dead nodes goes in one sweep.
    auto nodes = editor.Nodes();
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
      ir::Node* node = *it;
      bool used = false;
      for (const auto& out : node->outputs)
        if (!out.empty() && editor.UseCount(out) > 0) used = true;
      if (used) continue;
      editor.RemoveNode(node);
      ++ctx.counts["removed " + node->op_type];
      ++removed;
    }
    return removed;
  }
};

ONYX_REGISTER_PASS(DeadCodeElimination, 10);

}  // namespace
}  // namespace onyx
