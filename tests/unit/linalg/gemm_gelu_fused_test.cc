// The f32 GEMM's fused GELU (erf form) and Tanh (every activation in the scalar microkernel and
// in the few-columns path) against the standalone kernels of the same ISA: a MatMul + Add + Gelu gives the same bits
// whether or not the optimizer fuses the GELU into the GEMM. Each value reaches the epilogue as
// residual + 0 * 0 (alpha -1, so that -0 survives).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "linalg/gemm.h"
#include "linalg/isa_variant_test.h"
#include "linalg/vector_math.h"
#include "linalg/vector_test_util.h"

namespace onyx::linalg {
namespace {

using testing::BitsToFloat;

uint32_t BitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// The BERT-base value of GeluErfPositiveInputsRoundOnce, signed zeros, infinities, NaN, a
// linear sweep over [-14, 14] and a sweep of bit patterns over the same range.
std::vector<float> GeluInputs() {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {BitsToFloat(0x40242931u), 0.0f, -0.0f, kInf, -kInf, std::numeric_limits<float>::quiet_NaN(),
                          -13.2f, 13.2f, -9.0f, 9.0f, 1e-30f, -1e-30f, 1e-40f, -1e-40f};
  constexpr int kSteps = 1 << 18;
  for (int i = 0; i <= kSteps; ++i) x.push_back(-14.0f + 28.0f * static_cast<float>(i) / kSteps);
  for (uint32_t bits = 0; bits <= 0x41600000u; bits += 2039) {  // |x| in [0, 14]
    x.push_back(BitsToFloat(bits));
    x.push_back(-BitsToFloat(bits));
  }
  return x;
}

// The GEMM and the vector kernels forced to the same ISA.
class GemmGeluFused : public LinalgIsaVariant {
 protected:
  void SetUp() override {
    LinalgIsaVariant::SetUp();
    if (IsSkipped()) return;
    ASSERT_TRUE(ForceVectorIsa(GetParam()));
    ASSERT_EQ(SgemmIsa(), GetParam());
    ASSERT_EQ(VectorIsa(), GetParam());
  }
  void TearDown() override {
    LinalgIsaVariant::TearDown();
    ForceVectorIsa("auto");
  }
};

// C = -1 * (A B) + residual with A and B zeros: the epilogue sees exactly the residual.
std::vector<float> FusedGemm(const std::vector<float>& residual, int64_t m, int64_t n,
                             GemmEpilogue::Activation activation) {
  constexpr int64_t k = 8;
  const std::vector<float> a(m * k, 0.0f), b(k * n, 0.0f);
  std::vector<float> c(m * n, 0.0f);
  GemmEpilogue ep;
  ep.residual = residual.data();
  ep.ldr = n;
  ep.activation = activation;
  Sgemm(false, false, m, n, k, -1.0f, a.data(), k, b.data(), n, 0.0f, c.data(), n, nullptr, &ep);
  return c;
}

// How many of x's values the fused activation gives other bits for than the standalone kernel
// (the first few reported); NaN matches NaN.
// n: the GEMM's columns; 100 gives full tiles, a narrow tile and partial vectors on every ISA.
size_t FusedDiffers(std::vector<float> x, GemmEpilogue::Activation activation,
                    void (*standalone_fn)(const float*, float*, size_t), const char* name, int64_t n = 100) {
  const int64_t m = (static_cast<int64_t>(x.size()) + n - 1) / n;
  x.resize(m * n, 0.0f);
  const std::vector<float> before = FusedGemm(x, m, n, GemmEpilogue::kNone);
  for (size_t i = 0; i < x.size(); ++i)
    if (BitsOf(before[i]) != BitsOf(x[i])) {
      ADD_FAILURE() << "the epilogue's input is not the residual at " << i;
      return x.size();
    }
  const std::vector<float> fused = FusedGemm(x, m, n, activation);
  std::vector<float> standalone(x.size());
  standalone_fn(x.data(), standalone.data(), x.size());
  size_t differ = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    // Which NaN two NaN operands give depends on the operand order the compiler picked.
    if (BitsOf(fused[i]) == BitsOf(standalone[i]) || (std::isnan(fused[i]) && std::isnan(standalone[i]))) continue;
    if (++differ <= 5)
      ADD_FAILURE() << name << "(" << x[i] << " = 0x" << std::hex << BitsOf(x[i]) << std::dec << ") fused "
                    << fused[i] << ", standalone " << standalone[i];
  }
  return differ;
}

TEST_P(GemmGeluFused, EqualsStandaloneGeluBitForBit) {
  const std::vector<float> x = GeluInputs();
  EXPECT_EQ(FusedDiffers(x, GemmEpilogue::kGeluErf, &VecGeluErf, "gelu_erf"), 0u)
      << GetParam() << ": of " << x.size() << " values";
}

// Tanh too, over the GELU's inputs and the whole float range; Sigmoid, SiLU and the tanh GELU
// only in the scalar microkernel (the SIMD epilogues keep a cheaper sigmoid of their own).
TEST_P(GemmGeluFused, TanhAndScalarSigmoidsEqualStandalone) {
  std::vector<float> x = GeluInputs();
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 65521) {
    const float f = BitsToFloat(static_cast<uint32_t>(bits));
    if (!std::isnan(f)) x.push_back(f);  // a signaling NaN would arrive quieted
  }
  EXPECT_EQ(FusedDiffers(x, GemmEpilogue::kTanh, &VecTanh, "tanh"), 0u) << GetParam();
  if (GetParam() != "scalar") return;
  const struct {
    GemmEpilogue::Activation activation;
    void (*fn)(const float*, float*, size_t);
    const char* name;
  } cases[] = {{GemmEpilogue::kSigmoid, &VecSigmoid, "sigmoid"},
               {GemmEpilogue::kSilu, &VecSilu, "silu"},
               {GemmEpilogue::kGeluTanh, &VecGeluTanh, "gelu_tanh"}};
  for (const auto& c : cases) EXPECT_EQ(FusedDiffers(x, c.activation, c.fn, c.name), 0u) << c.name;
}

// The few-columns path (N <= 4: one dot product per output, its own epilogue) applies every
// transcendental activation through the standalone kernels too.
TEST_P(GemmGeluFused, FewColumnsPathEqualsStandalone) {
  const std::vector<float> x = GeluInputs();
  const struct {
    GemmEpilogue::Activation activation;
    void (*fn)(const float*, float*, size_t);
    const char* name;
  } cases[] = {{GemmEpilogue::kGeluErf, &VecGeluErf, "gelu_erf"}, {GemmEpilogue::kTanh, &VecTanh, "tanh"},
               {GemmEpilogue::kSigmoid, &VecSigmoid, "sigmoid"},  {GemmEpilogue::kSilu, &VecSilu, "silu"},
               {GemmEpilogue::kGeluTanh, &VecGeluTanh, "gelu_tanh"}};
  for (const int64_t n : {1, 3}) {
    ASSERT_TRUE(SgemmTakesFewColumnsPath(false, n, 8)) << n;
    for (const auto& c : cases) EXPECT_EQ(FusedDiffers(x, c.activation, c.fn, c.name, n), 0u) << c.name << ", N = " << n;
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, GemmGeluFused, ::testing::Values("avx512", "avx2", "scalar"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace onyx::linalg
