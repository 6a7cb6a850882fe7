// The exact GELU, x * 0.5 * (1 + erf(x / sqrt(2))) in any of its exporter variants, becomes one
// node (extended): com.microsoft.Gelu, or ONNX Gelu (approximate "none") in models of opset 20
// and later, as ONNX Runtime does.
#include <cmath>

#include "optimizer/fusion_util.h"
#include "optimizer/pass.h"
#include "optimizer/passes/gelu_pattern.h"

namespace onyx {
namespace {

using namespace fusion;

constexpr double kInvSqrt2 = 0.70710678118654752440;
// How far the 1/sqrt(2) the pattern multiplies by may be from it: a float16 or bfloat16 model's
// constant, rounded to its type (1/1.4140625 or 0.70703125, both ~1.1e-4 off), is still the GELU's.
constexpr double kInvSqrt2RelTol = 2e-4;

class GeluFusion final : public Pass {
 public:
  std::string name() const override { return "GeluFusion"; }
  OptLevel level() const override { return OptLevel::kExtended; }
  std::vector<std::string> providers() const override { return {"CPU"}; }

  int Apply(PassContext& ctx) override {
    GraphEditor& editor = ctx.editor;
    int rewrites = 0;
    // Each rewrite replaces nodes by one computing the same output: the types stand.
    const auto frozen = editor.FreezeTypes();
    for (ir::Node* erf : editor.NodesOfType("Erf")) {
      if (erf->opset < 9) continue;
      auto m = MatchGelu(editor, erf);
      if (!m || !TypeIn(ElemType(editor, m->x), {DataType::kFloat, DataType::kFloat16})) continue;
      const auto& p = m->poly;
      if (p[0] != 0.0 || p[2] != 0.0 || p[3] != 0.0 || std::fabs(p[1] - kInvSqrt2) > kInvSqrt2RelTol * kInvSqrt2) continue;
      const int opset = erf->opset;
      if (opset >= 20 ? !CanRun(ctx, "Gelu", "", opset) : !CanRun(ctx, "Gelu", kMsDomain, 1)) continue;
      RemoveAll(editor, m->nodes);
      if (opset >= 20) {
        AddFusedNode(editor, "Gelu", "", opset, {m->x}, {m->output})
            ->attributes.push_back(StringAttr("approximate", "none"));
        ++ctx.counts["Gelu"];
      } else {
        AddFusedNode(editor, "Gelu", kMsDomain, 1, {m->x}, {m->output});
        ++ctx.counts["com.microsoft.Gelu"];
      }
      ++rewrites;
    }
    return rewrites;
  }
};

ONYX_REGISTER_PASS(GeluFusion, 300);

}  // namespace
}  // namespace onyx
