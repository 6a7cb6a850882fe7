// Q8MinMax (DynamicQuantizeLinear's range), Q8QuantizeU8 / Q8QuantizeS8 (QuantizeLinear's and DynamicQuantizeLinear's vectorized rows) and
// Q8DequantizeU8 / Q8DequantizeS8 for every ISA variant against the scalar formulas they replace:
// clamp(nearbyint(x / scale) + zero_point) with a NaN giving the lowest code, and
// (float(x) - zero_point) * scale; on exact ties, saturating values, infinities and NaNs, in
// rows of odd lengths (vector bodies and tails).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "linalg/gemm.h"
#include "linalg/isa_variant_test.h"
#include "linalg/q8_quantize.h"

namespace onyx::linalg {
namespace {

class Q8QuantizeRowsVariant : public LinalgIsaVariant {};

template <typename T>
T QuantizeReference(float x, float scale, T zero_point) {
  const float r = std::nearbyint(x / scale) + static_cast<float>(zero_point);
  if (std::isnan(r)) return std::numeric_limits<T>::lowest();  // as ONNX Runtime's quantizers
  const float lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
  return static_cast<T>(std::min(std::max(r, lo), hi));
}

// Values around every code at the given scale: exact ties (k + 0.5), near-ties, far outside the
// range, infinities, NaN and random ones.
std::vector<float> Inputs(float scale) {
  std::vector<float> x;
  for (int k = -300; k <= 300; ++k)
    for (float f : {0.0f, 0.5f, -0.5f, 0.49999f, 0.50001f, 0.25f})
      x.push_back((static_cast<float>(k) + f) * scale);
  for (float v : {1e30f, -1e30f, std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                  std::numeric_limits<float>::quiet_NaN(), 0.0f, -0.0f})
    x.push_back(v);
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.0f, 100.0f * scale);
  for (int i = 0; i < 1000; ++i) x.push_back(dist(rng));
  return x;
}

template <typename T>
void CheckQuantize(void (*quantize)(const float*, int64_t, float, T, T*)) {
  for (float scale : {1.0f, 0.0173f, 3.5f, -0.25f})
    for (int z : {int(std::numeric_limits<T>::lowest()), 0, 17, int(std::numeric_limits<T>::max())}) {
      const T zp = static_cast<T>(z);
      const std::vector<float> x = Inputs(scale);
      std::vector<T> out(x.size());
      for (int64_t begin = 0, row = 1; begin < static_cast<int64_t>(x.size()); begin += row, row = row * 3 % 97 + 1) {
        const int64_t n = std::min<int64_t>(row, static_cast<int64_t>(x.size()) - begin);
        quantize(x.data() + begin, n, scale, zp, out.data() + begin);
      }
      for (size_t i = 0; i < x.size(); ++i)
        ASSERT_EQ(int(out[i]), int(QuantizeReference(x[i], scale, zp)))
            << "x " << x[i] << " scale " << scale << " zero point " << z;
    }
}

TEST_P(Q8QuantizeRowsVariant, QuantizeU8MatchesFormula) { CheckQuantize<uint8_t>(&Q8QuantizeU8); }

TEST_P(Q8QuantizeRowsVariant, QuantizeS8MatchesFormula) { CheckQuantize<int8_t>(&Q8QuantizeS8); }

template <typename T>
void CheckDequantize(void (*dequantize)(const T*, int64_t, float, float, float*)) {
  std::vector<T> x;
  for (int r = 0; r < 3; ++r)
    for (int v = std::numeric_limits<T>::lowest(); v <= std::numeric_limits<T>::max(); ++v) x.push_back(static_cast<T>(v));
  for (float scale : {1.0f, 0.0173f, 1e-30f, -3.25f})
    for (int z : {int(std::numeric_limits<T>::lowest()), 0, 5, int(std::numeric_limits<T>::max())}) {
      std::vector<float> out(x.size());
      for (int64_t begin = 0, row = 1; begin < static_cast<int64_t>(x.size()); begin += row, row = row * 5 % 71 + 1) {
        const int64_t n = std::min<int64_t>(row, static_cast<int64_t>(x.size()) - begin);
        dequantize(x.data() + begin, n, scale, static_cast<float>(z), out.data() + begin);
      }
      for (size_t i = 0; i < x.size(); ++i) {
        const float want = (static_cast<float>(x[i]) - static_cast<float>(z)) * scale;
        ASSERT_EQ(out[i], want) << "code " << int(x[i]) << " scale " << scale << " zero point " << z;
      }
    }
}

TEST_P(Q8QuantizeRowsVariant, DequantizeU8MatchesFormula) { CheckDequantize<uint8_t>(&Q8DequantizeU8); }

TEST_P(Q8QuantizeRowsVariant, DequantizeS8MatchesFormula) { CheckDequantize<int8_t>(&Q8DequantizeS8); }

// DynamicQuantizeLinear's range: min(0, x...) and max(0, x...) with NaNs skipped, for every
// length up to a few vectors (bodies and tails), the extreme at every position.
TEST_P(Q8QuantizeRowsVariant, MinMaxMatchesLoop) {
  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0.0f, 10.0f);
  for (int64_t n = 0; n <= 100; ++n)
    for (int64_t at = 0; at < std::max<int64_t>(n, 1); at += 7) {
      for (float sign : {1.0f, -1.0f}) {
        std::vector<float> x(static_cast<size_t>(n));
        for (float& v : x) v = sign * std::abs(dist(rng)) + (n % 3 == 0 ? 0.0f : -sign * 5.0f);
        if (n > 0) x[static_cast<size_t>(at)] = sign * 1000.0f;
        if (n > 2) x[static_cast<size_t>((at + 1) % n)] = std::numeric_limits<float>::quiet_NaN();
        if (n > 3) x[static_cast<size_t>((at + 2) % n)] = -0.0f;
        float want_lo = 0.0f, want_hi = 0.0f;
        for (float v : x) {
          want_lo = v < want_lo ? v : want_lo;
          want_hi = v > want_hi ? v : want_hi;
        }
        float lo = 1.0f, hi = -1.0f;
        Q8MinMax(x.data(), n, &lo, &hi);
        ASSERT_EQ(lo, want_lo) << "n " << n << " at " << at;
        ASSERT_EQ(hi, want_hi) << "n " << n << " at " << at;
        ASSERT_FALSE(std::signbit(lo) && lo == 0.0f) << "a negative zero low end, n " << n;
      }
    }
}

INSTANTIATE_TEST_SUITE_P(AllIsas, Q8QuantizeRowsVariant, ::testing::Values("avx512", "avx2", "scalar"),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace onyx::linalg
