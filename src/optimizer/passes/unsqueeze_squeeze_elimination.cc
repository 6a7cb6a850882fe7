// Squeeze(Unsqueeze(x, axes), axes) is x (basic). Axes must be constant and equal after
// normalization against the unsqueezed rank.
#include <algorithm>

#include "optimizer/pass.h"
#include "optimizer/pattern_util.h"

namespace onyx {
namespace {

std::optional<std::vector<int64_t>> Axes(GraphEditor& editor, const ir::Node& node, int64_t rank) {
  std::optional<std::vector<int64_t>> axes =
      node.opset >= 13 ? ConstantInts(editor, node, 1) : std::optional<std::vector<int64_t>>(AttrInts(node, "axes"));
  if (!axes || axes->empty()) return std::nullopt;
  for (auto& a : *axes) {
    if (a < 0) a += rank;
    if (a < 0 || a >= rank) return std::nullopt;
  }
  std::sort(axes->begin(), axes->end());
  return axes;
}

class UnsqueezeSqueezeElimination final : public Pass {
 public:
  std::string name() const override { return "UnsqueezeSqueezeElimination"; }
  OptLevel level() const override { return OptLevel::kBasic; }

  int Apply(PassContext& ctx) override {
    GraphEditor& editor = ctx.editor;
    int rewrites = 0;
    for (ir::Node* squeeze : editor.NodesOfType("Squeeze")) {
      ir::Node* unsqueeze = editor.Producer(squeeze->inputs[0]);
      if (!IsOp(unsqueeze, "Unsqueeze") || editor.UseCount(unsqueeze->outputs[0]) != 1) continue;
      const auto* mid = editor.DimsOf(unsqueeze->outputs[0]);
      if (mid == nullptr) continue;
      const int64_t rank = static_cast<int64_t>(mid->size());
      auto a = Axes(editor, *unsqueeze, rank), b = Axes(editor, *squeeze, rank);
      if (!a || !b || *a != *b) continue;
      const std::string x = unsqueeze->inputs[0], y = squeeze->outputs[0];
      if (editor.IsGraphOutput(y) && !editor.Producer(x)) continue;
      editor.RemoveNode(unsqueeze);
      editor.RemoveNode(squeeze);
      editor.ReplaceAllUses(y, x);
      ++ctx.counts["removed Unsqueeze/Squeeze pair"];
      ++rewrites;
    }
    return rewrites;
  }
};

ONYX_REGISTER_PASS(UnsqueezeSqueezeElimination, 80);

}  // namespace
}  // namespace onyx
