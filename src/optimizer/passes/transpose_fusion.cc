// Transpose of a Transpose becomes one Transpose, or nothing when the permutations cancel
// (basic).
#include "optimizer/pass.h"
#include "optimizer/pattern_util.h"

namespace onyx {
namespace {

class TransposeFusion final : public Pass {
 public:
  std::string name() const override { return "TransposeFusion"; }
  OptLevel level() const override { return OptLevel::kBasic; }

  int Apply(PassContext& ctx) override {
    GraphEditor& editor = ctx.editor;
    int rewrites = 0;
    for (ir::Node* second : editor.NodesOfType("Transpose")) {
      ir::Node* first = editor.Producer(second->inputs[0]);
      if (!IsOp(first, "Transpose") || editor.UseCount(first->outputs[0]) != 1) continue;
      auto p1 = AttrInts(*first, "perm"), p2 = AttrInts(*second, "perm");
      if (p1.empty() || p1.size() != p2.size()) continue;  // default perms need the rank
      // y[i] = t[p2[i]] = x[p1[p2[i]]]
      std::vector<int64_t> composed(p2.size());
      bool identity = true;
      for (size_t i = 0; i < p2.size(); ++i) {
        composed[i] = p1[p2[i]];
        identity = identity && composed[i] == static_cast<int64_t>(i);
      }
      const std::string x = first->inputs[0];
      const std::string y = second->outputs[0];
      editor.RemoveNode(first);
      if (identity && !(editor.IsGraphOutput(y) && !editor.Producer(x))) {
        editor.RemoveNode(second);
        editor.ReplaceAllUses(y, x);
        ++ctx.counts["removed Transpose pair"];
      } else {
        editor.SetInput(second, 0, x);
        second->FindAttribute("perm")->ints = composed;
        ++ctx.counts["merged Transposes"];
      }
      ++rewrites;
    }
    return rewrites;
  }
};

ONYX_REGISTER_PASS(TransposeFusion, 70);

}  // namespace
}  // namespace onyx
