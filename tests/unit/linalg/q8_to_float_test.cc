// Q8ToFloat (DynamicQuantizeConv's float output stage) on every ISA against a scalar formula
// written here: the product and the sum each rounded (volatile stops any fused multiply-add),
// then the clamp as Clip compares. Bit for bit, every length up to a few vectors (the tails).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "linalg/gemm.h"
#include "linalg/isa_variant_test.h"
#include "linalg/q8_to_float.h"

namespace onyx::linalg {
namespace {

float Expected(int32_t acc, float scale, const float* bias, float lo, float hi) {
  volatile float product = static_cast<float>(acc) * scale;
  float v = product;
  if (bias != nullptr) {
    volatile float sum = v + *bias;
    v = sum;
  }
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}

uint32_t Bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

class Q8ToFloatVariant : public LinalgIsaVariant {};

TEST_P(Q8ToFloatVariant, MatchesTheGraphsFloatOps) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int32_t> small(-40000, 40000);
  std::uniform_int_distribution<int32_t> any(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  struct Case {
    float scale, bias;
    bool has_bias;
    float lo, hi;
  };
  const Case cases[] = {
      {0.00123f, 0.337f, true, -inf, inf},  // Conv: Mul + Add
      {0.00123f, 0.0f, false, -inf, inf},   // no B
      {3.1e-4f, -0.71f, true, 0.0f, inf},   // Relu
      {7.7e-4f, 0.05f, true, 0.0f, 6.0f},   // Clip(0, 6)
      {7.7e-4f, 0.05f, true, -0.5f, 0.25f},
      {inf, 1.0f, true, -inf, inf},          // inf * 0 is NaN: it passes the clamp
      {nan, 0.0f, true, 0.0f, 6.0f},         // NaN scale: NaN out through Clip
      {1e-3f, -inf, true, -1.0f, 1.0f},
  };
  int fma_differs = 0;
  for (const Case& c : cases)
    for (int64_t n : {0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 64, 100}) {
      std::vector<int32_t> acc(static_cast<size_t>(n));
      for (int32_t& a : acc) a = rng() % 8 == 0 ? any(rng) : small(rng);
      if (n > 2) acc[0] = std::numeric_limits<int32_t>::min(), acc[1] = 0;
      std::vector<int32_t> row = acc;
      row.push_back(0x7F7F7F7F);  // past the end: must stay as it is
      const float* bias = c.has_bias ? &c.bias : nullptr;
      Q8ToFloat(row.data(), n, c.scale, bias, c.lo, c.hi);
      for (int64_t i = 0; i < n; ++i) {
        const float want = Expected(acc[static_cast<size_t>(i)], c.scale, bias, c.lo, c.hi);
        float got;
        std::memcpy(&got, &row[static_cast<size_t>(i)], 4);
        if (std::isnan(want)) {
          EXPECT_TRUE(std::isnan(got)) << GetParam() << " n=" << n << " i=" << i;
        } else {
          EXPECT_EQ(Bits(got), Bits(want)) << GetParam() << " n=" << n << " i=" << i << " acc="
                                           << acc[static_cast<size_t>(i)] << " got " << got << " want " << want;
        }
        if (c.has_bias && std::isfinite(c.scale) && std::isfinite(c.bias)) {
          const float a = static_cast<float>(acc[static_cast<size_t>(i)]);
          fma_differs += std::fma(a, c.scale, c.bias) != Expected(acc[static_cast<size_t>(i)], c.scale, bias, -inf, inf);
        }
      }
      EXPECT_EQ(row[static_cast<size_t>(n)], 0x7F7F7F7F) << GetParam() << " wrote past n=" << n;
    }
  // The data tells a fused multiply-add from a product then a sum, so a contracted kernel fails.
  EXPECT_GT(fma_differs, 10);
}

INSTANTIATE_TEST_SUITE_P(AllIsas, Q8ToFloatVariant, ::testing::Values("avx512", "avx2", "scalar"),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace onyx::linalg
