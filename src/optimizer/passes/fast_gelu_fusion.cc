// The tanh approximation of GELU, 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), in
// any of its exporter variants (Pow(x, 3) or x*x*x, Megatron's sqrt(2/pi) * x * (1 + 0.044715 *
// x * x), operands in any order) becomes com.microsoft.FastGelu (extended).
#include <cmath>

#include "optimizer/fusion_util.h"
#include "optimizer/pass.h"
#include "optimizer/passes/gelu_pattern.h"

namespace onyx {
namespace {

using namespace fusion;

constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kCubeCoef = 0.044715;

class FastGeluFusion final : public Pass {
 public:
  std::string name() const override { return "FastGeluFusion"; }
  OptLevel level() const override { return OptLevel::kExtended; }
  std::vector<std::string> providers() const override { return {"CPU"}; }

  int Apply(PassContext& ctx) override {
    GraphEditor& editor = ctx.editor;
    int rewrites = 0;
    if (!CanRun(ctx, "FastGelu", kMsDomain, 1)) return 0;
    for (ir::Node* tanh : editor.NodesOfType("Tanh")) {
      auto m = MatchGelu(editor, tanh);
      if (!m || !TypeIn(ElemType(editor, m->x), {DataType::kFloat, DataType::kFloat16})) continue;
      const auto& p = m->poly;
      if (p[0] != 0.0 || p[2] != 0.0 || std::fabs(p[1] - kSqrt2OverPi) > 1e-4 * kSqrt2OverPi) continue;
      if (std::fabs(p[3] / p[1] - kCubeCoef) > 1e-4 * kCubeCoef) continue;
      RemoveAll(editor, m->nodes);
      AddFusedNode(editor, "FastGelu", kMsDomain, 1, {m->x}, {m->output});
      ++ctx.counts["com.microsoft.FastGelu"];
      ++rewrites;
    }
    return rewrites;
  }
};

ONYX_REGISTER_PASS(FastGeluFusion, 310);

}  // namespace
}  // namespace onyx
