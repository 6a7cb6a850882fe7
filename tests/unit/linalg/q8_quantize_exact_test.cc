// Q8QuantizeU8 / Q8QuantizeS8 on every ISA against the formula written out here with a real
// division (clamp(nearbyint(x / scale)) + zero point, a NaN to the lowest code), where a variant
// that rounded the quotient differently (a multiply by 1 / scale, a contracted or reassociated
// form) shows: quotients at and one to three ulps around every half-integer of the range, ties
// included, besides random ones, infinities, NaN, signed zeros, and scales whose reciprocal is
// not a normal float. (AVX-512 multiplies by 1 / scale and corrects the quotient with one fma:
// on the AMD EPYC a variant that divided only near half-integers was slower than vdivps, on the
// Sapphire Rapids Xeon vdivps bounds the pass.)
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "linalg/isa_variant_test.h"
#include "linalg/q8_quantize.h"

namespace onyx::linalg {
namespace {

class Q8QuantizeExact : public LinalgIsaVariant {};

template <typename T>
T Reference(float x, float scale, T zp) {
  const float q = x / scale;
  if (std::isnan(q)) return std::numeric_limits<T>::lowest();  // as ONNX Runtime's quantizers
  const float lo = static_cast<float>(std::numeric_limits<T>::lowest()) - static_cast<float>(zp);
  const float hi = static_cast<float>(std::numeric_limits<T>::max()) - static_cast<float>(zp);
  const float v = std::nearbyint(std::min(std::max(q, lo), hi));
  return static_cast<T>(static_cast<int32_t>(v) + zp);
}

std::vector<float> Inputs(float scale, uint32_t seed) {
  std::vector<float> x;
  for (int k = -300; k <= 300; ++k) {
    const float tie = (static_cast<float>(k) + 0.5f) * scale;  // the product rounded: near the tie
    float up = tie, down = tie;
    x.push_back(tie);
    for (int u = 0; u < 3; ++u) {
      up = std::nextafter(up, std::numeric_limits<float>::infinity());
      down = std::nextafter(down, -std::numeric_limits<float>::infinity());
      x.push_back(up);
      x.push_back(down);
    }
    x.push_back(static_cast<float>(k) * scale);
  }
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-400.0f, 400.0f);
  for (int i = 0; i < 3000; ++i) x.push_back(u(rng) * scale);
  const float inf = std::numeric_limits<float>::infinity();
  for (float v : {0.0f, -0.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN(), 3e38f, -3e38f, 1e-30f, -1e-42f})
    x.push_back(v);
  x.push_back(1.0f);  // an odd count: a masked tail
  return x;
}

template <typename T>
void Check(float scale, T zp, uint32_t seed) {
  const std::vector<float> x = Inputs(scale, seed);
  std::vector<T> out(x.size());
  const auto n = static_cast<int64_t>(x.size());
  if constexpr (std::is_same_v<T, uint8_t>) Q8QuantizeU8(x.data(), n, scale, zp, out.data());
  else Q8QuantizeS8(x.data(), n, scale, zp, out.data());
  for (size_t i = 0; i < x.size(); ++i)
    ASSERT_EQ(static_cast<int>(out[i]), static_cast<int>(Reference(x[i], scale, zp)))
        << "x " << x[i] << " (bits " << std::hex << *reinterpret_cast<const uint32_t*>(&x[i]) << std::dec
        << ") scale " << scale << " zero point " << static_cast<int>(zp);
}

TEST_P(Q8QuantizeExact, MatchesTheDivisionAtAndAroundEveryHalfInteger) {
  uint32_t seed = 1;
  for (float scale : {1.0f / 3.0f, 0.0123f, 7.3e-3f, 0.1f, 1.7f, 2.0f, 3.1e-5f}) {
    for (uint8_t zp : {uint8_t{0}, uint8_t{128}, uint8_t{255}, uint8_t{37}}) Check<uint8_t>(scale, zp, seed++);
    for (int8_t zp : {int8_t{-128}, int8_t{0}, int8_t{127}, int8_t{-5}}) Check<int8_t>(scale, zp, seed++);
  }
}

TEST_P(Q8QuantizeExact, ScalesWithoutANormalReciprocal) {
  for (float scale : {1e-40f, 3e38f, std::numeric_limits<float>::denorm_min()}) {
    Check<uint8_t>(scale, 128, 7);
    Check<int8_t>(scale, 3, 8);
  }
}

// AVX-512 multiplies by 1 / scale and corrects the quotient by one fma step where that is exact
// (scales in [2^-60, 2^60]): the range's ends and the first scales past them, quotients past the
// float range (3e38 / 2^-60), and random scales over nine decades.
TEST_P(Q8QuantizeExact, ReciprocalRangeEndsAndRandomScales) {
  for (float scale : {0x1p-60f, 0x1p60f, 0x1.fffffep-61f, 0x1.000002p60f, 0x1.fffffep-1f, 1.0f}) {
    Check<uint8_t>(scale, 128, 11);
    Check<int8_t>(scale, -7, 12);
  }
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> decade(-6.0f, 3.0f);
  for (uint32_t i = 0; i < 24; ++i) {
    const float scale = std::pow(10.0f, decade(rng));
    Check<uint8_t>(scale, static_cast<uint8_t>(rng()), 100 + i);
    Check<int8_t>(scale, static_cast<int8_t>(rng()), 200 + i);
  }
}

INSTANTIATE_TEST_SUITE_P(AllIsas, Q8QuantizeExact, ::testing::Values("avx512", "avx2", "scalar"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace onyx::linalg
