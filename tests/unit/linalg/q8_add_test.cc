// Q8AddU8 / Q8AddS8 (QLinearAdd's vectorized row) for every ISA variant against the scalar
// formula they replace: nearbyint(clamp(fma(x, rx, fma(y, ry, fixed)), type range)), with y
// advancing or one value for the row, on every input code, saturating sums and exact ties.
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

class Q8AddVariant : public LinalgIsaVariant {};

template <typename T>
T Reference(T x, float rx, T y, float ry, float fixed) {
  const float v = std::fma(static_cast<float>(x), rx, std::fma(static_cast<float>(y), ry, fixed));
  const float lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
  return static_cast<T>(static_cast<int32_t>(std::nearbyint(std::clamp(v, lo, hi))));
}

template <typename T>
void Check(void (*add)(const T*, float, const T*, int64_t, float, float, int64_t, T*), float rx, float ry,
           float fixed) {
  // Every pair of codes, in rows of odd length (vector bodies and tails).
  std::vector<T> x, y;
  for (int a = std::numeric_limits<T>::lowest(); a <= std::numeric_limits<T>::max(); ++a)
    for (int b = std::numeric_limits<T>::lowest(); b <= std::numeric_limits<T>::max(); ++b) {
      x.push_back(static_cast<T>(a));
      y.push_back(static_cast<T>(b));
    }
  const int64_t row = 253;
  std::vector<T> out(x.size());
  for (int64_t begin = 0; begin < static_cast<int64_t>(x.size()); begin += row) {
    const int64_t n = std::min<int64_t>(row, static_cast<int64_t>(x.size()) - begin);
    add(x.data() + begin, rx, y.data() + begin, 1, ry, fixed, n, out.data() + begin);
  }
  for (size_t i = 0; i < x.size(); ++i)
    ASSERT_EQ(static_cast<int>(out[i]), static_cast<int>(Reference(x[i], rx, y[i], ry, fixed)))
        << "x " << int(x[i]) << " y " << int(y[i]);
  // One y for the row.
  for (int b : {int(std::numeric_limits<T>::lowest()), 0, 7, int(std::numeric_limits<T>::max())}) {
    const T yb = static_cast<T>(b);
    add(x.data(), rx, &yb, 0, ry, fixed, 256, out.data());
    for (int64_t i = 0; i < 256; ++i)
      ASSERT_EQ(static_cast<int>(out[i]), static_cast<int>(Reference(x[i], rx, yb, ry, fixed))) << "y " << b;
  }
}

TEST_P(Q8AddVariant, MatchesTheScalarFormulaOnEveryPairOfCodes) {
  // Ratios and zero points from real models, one pair giving exact ties (x.5 results).
  const float ratios[][3] = {{0.5f, 0.25f, 3.0f}, {1.7f, 0.31f, -20.5f}, {0.0452469f / 0.0235294f, 0.5f, -64.0f}};
  for (const auto& r : ratios) {
    Check<uint8_t>(&Q8AddU8, r[0], r[1], r[2] + 100.0f);
    Check<int8_t>(&Q8AddS8, r[0], r[1], r[2]);
  }
}

INSTANTIATE_TEST_SUITE_P(AllIsas, Q8AddVariant, ::testing::Values("avx512", "avx2", "scalar"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace onyx::linalg
