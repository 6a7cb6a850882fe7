// Q8MulU8 / Q8MulS8 (QLinearMul's vectorized row) for every ISA variant against the scalar
// formula they replace: nearbyint(clamp(float((x - zx)(y - zy)) * ratio, lo - zc, hi - zc) + zc),
// with y advancing or one value for the row, on every pair of codes, saturating products and
// exact ties.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "linalg/gemm.h"
#include "linalg/isa_variant_test.h"
#include "linalg/q8_quantize.h"

namespace onyx::linalg {
namespace {

class Q8MulVariant : public LinalgIsaVariant {};

template <typename T>
T Reference(T x, int32_t zx, T y, int32_t zy, float ratio, int32_t zc) {
  const int32_t prod = (static_cast<int32_t>(x) - zx) * (static_cast<int32_t>(y) - zy);
  const float lo = static_cast<float>(std::numeric_limits<T>::lowest() - zc);
  const float hi = static_cast<float>(std::numeric_limits<T>::max() - zc);
  const float v = std::clamp(static_cast<float>(prod) * ratio, lo, hi);
  return static_cast<T>(static_cast<int32_t>(std::nearbyint(v + static_cast<float>(zc))));
}

template <typename T>
void Check(void (*mul)(const T*, int32_t, const T*, int64_t, int32_t, float, int32_t, int64_t, T*), int32_t zx,
           int32_t zy, float ratio, int32_t zc) {
  std::vector<T> x, y;
  for (int a = std::numeric_limits<T>::lowest(); a <= std::numeric_limits<T>::max(); ++a)
    for (int b = std::numeric_limits<T>::lowest(); b <= std::numeric_limits<T>::max(); ++b) {
      x.push_back(static_cast<T>(a));
      y.push_back(static_cast<T>(b));
    }
  const int64_t row = 253;  // odd: vector bodies and masked tails
  std::vector<T> out(x.size());
  for (int64_t begin = 0; begin < static_cast<int64_t>(x.size()); begin += row) {
    const int64_t n = std::min<int64_t>(row, static_cast<int64_t>(x.size()) - begin);
    mul(x.data() + begin, zx, y.data() + begin, 1, zy, ratio, zc, n, out.data() + begin);
  }
  for (size_t i = 0; i < x.size(); ++i)
    ASSERT_EQ(static_cast<int>(out[i]), static_cast<int>(Reference(x[i], zx, y[i], zy, ratio, zc)))
        << "x " << int(x[i]) << " y " << int(y[i]) << " ratio " << ratio;
  for (int b : {int(std::numeric_limits<T>::lowest()), 0, 7, int(std::numeric_limits<T>::max())}) {
    const T yb = static_cast<T>(b);
    mul(x.data(), zx, &yb, 0, zy, ratio, zc, 256, out.data());
    for (int64_t i = 0; i < 256; ++i)
      ASSERT_EQ(static_cast<int>(out[i]), static_cast<int>(Reference(x[i], zx, yb, zy, ratio, zc))) << "y " << b;
  }
}

TEST_P(Q8MulVariant, MatchesTheScalarFormulaOnEveryPairOfCodes) {
  // Scale ratios from BERT's Gelu and mask products, and 0.5 / 0.25 (exact ties on odd products).
  const float ratios[] = {0.5f, 0.25f, 0.00712f, 1.93f, 0.0452469f * 0.0235294f / 0.0101f};
  for (float r : ratios) {
    Check<uint8_t>(&Q8MulU8, 128, 3, r, 121);
    Check<uint8_t>(&Q8MulU8, 0, 255, r, 0);
    Check<int8_t>(&Q8MulS8, 0, -5, r, -128);
    Check<int8_t>(&Q8MulS8, 17, 0, r, 3);
  }
}

INSTANTIATE_TEST_SUITE_P(AllIsas, Q8MulVariant, ::testing::Values("avx512", "avx2", "scalar"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace onyx::linalg
