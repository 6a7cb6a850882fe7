// The tanh approximation of GELU, 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), in
// any of its exporter variants (Pow(x, 3) or x*x*x, Megatron's sqrt(2/pi) * x * (1 + 0.044715 *
// x * x), operands in any order) becomes com.microsoft.FastGelu (extended).
#include <cmath>

#include "base/float_types.h"
#include "optimizer/fusion_util.h"
#include "optimizer/pass.h"
#include "optimizer/passes/gelu_pattern.h"

namespace onyx {
namespace {

using namespace fusion;

constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kCubeCoef = 0.044715;

// Within 1e-4 of k, or of k as a float16 or bfloat16 model stores it: HalfBodyToFloat widens a
// half body's constants exactly, and float16 rounds 0.044715 by 1.5e-4 (GPT-2 float16 kept its
// unfused tanh GELU, 9 nodes a layer, where its float32 twin runs FastGelu).
bool IsCoefficient(double v, double k) {
  const auto near = [v](double want) { return std::fabs(v - want) <= 1e-4 * std::fabs(want); };
  const float kf = static_cast<float>(k);
  return near(k) || near(HalfBitsToFloat(FloatToHalfBits(kf))) || near(BFloat16BitsToFloat(FloatToBFloat16Bits(kf)));
}

class FastGeluFusion final : public Pass {
 public:
  std::string name() const override { return "FastGeluFusion"; }
  OptLevel level() const override { return OptLevel::kExtended; }
  std::vector<std::string> providers() const override { return {"CPU"}; }

  int Apply(PassContext& ctx) override {
    GraphEditor& editor = ctx.editor;
    int rewrites = 0;
    // Each rewrite replaces nodes by one computing the same output: the types stand.
    const auto frozen = editor.FreezeTypes();
    if (!CanRun(ctx, "FastGelu", kMsDomain, 1)) return 0;
    for (ir::Node* tanh : editor.NodesOfType("Tanh")) {
      auto m = MatchGelu(editor, tanh);
      if (!m || !TypeIn(ElemType(editor, m->x), {DataType::kFloat, DataType::kFloat16})) continue;
      const auto& p = m->poly;
      if (p[0] != 0.0 || p[2] != 0.0 || !IsCoefficient(p[1], kSqrt2OverPi)) continue;
      if (!IsCoefficient(p[3] / p[1], kCubeCoef)) continue;
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
