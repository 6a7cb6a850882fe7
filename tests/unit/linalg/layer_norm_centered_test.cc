// LayerNormRowsCentered (linalg/layer_norm_centered.h): every variant gives the scalar
// reference's floats bit for bit (rows of 1 to 1030 values, around the 4- and 8-lane widths, 1 to
// 9 rows, with and without bias and statistics outputs), stays within a few float ulps of the
// LayerNorm computed in double, and writes nothing past its rows. That these floats are ONNX
// Runtime's is tests/python/quantization/test_qdq_layer_norm_exact.py's check.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "linalg/gemm.h"
#include "linalg/isa_variant_test.h"
#include "linalg/layer_norm_centered.h"

namespace onyx::linalg {
namespace {

using NormFn = void (*)(const float*, float*, int64_t, int64_t, const float*, const float*, float, float*, float*);

constexpr float kSentinel = -12345.0f;

struct Case {
  std::vector<float> x, scale, bias;
  int64_t rows, n;
};

Case MakeCase(int64_t rows, int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  Case c{std::vector<float>(static_cast<size_t>(rows * n)), std::vector<float>(n), std::vector<float>(n), rows, n};
  for (int64_t r = 0; r < rows; ++r) {
    // Rows of different offsets and spreads (an offset far above the spread is where the
    // statistics' order of operations shows most).
    const float offset = 4.0f * uniform(rng), spread = 0.05f + 3.0f * std::abs(uniform(rng));
    for (int64_t i = 0; i < n; ++i) c.x[static_cast<size_t>(r * n + i)] = offset + spread * normal(rng);
  }
  for (int64_t i = 0; i < n; ++i) c.scale[i] = 1.0f + 0.5f * uniform(rng), c.bias[i] = 0.1f * normal(rng);
  return c;
}

struct Result {
  std::vector<float> y, mean, inv;
};

Result Normalize(NormFn fn, const Case& c, bool with_bias, bool with_stats) {
  Result out{std::vector<float>(c.x.size() + 16, kSentinel), std::vector<float>(c.rows + 4, kSentinel),
             std::vector<float>(c.rows + 4, kSentinel)};
  fn(c.x.data(), out.y.data(), c.rows, c.n, c.scale.data(), with_bias ? c.bias.data() : nullptr, 1e-5f,
     with_stats ? out.mean.data() : nullptr, with_stats ? out.inv.data() : nullptr);
  return out;
}

bool SameBits(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; }

void CheckAgainstScalar(NormFn fn) {
  uint32_t seed = 1;
  for (int64_t n : {1, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 20, 31, 64, 100, 768, 771, 1030}) {
    for (int64_t rows : {1, 3, 4, 5, 9}) {
      const Case c = MakeCase(rows, n, seed++);
      for (bool with_bias : {true, false}) {
        for (bool with_stats : {true, false}) {
          const Result want = Normalize(&LayerNormRowsCenteredScalar, c, with_bias, with_stats);
          const Result got = Normalize(fn, c, with_bias, with_stats);
          for (size_t i = 0; i < got.y.size(); ++i)
            ASSERT_TRUE(SameBits(got.y[i], want.y[i]))
                << "n " << n << " rows " << rows << " bias " << with_bias << " at " << i << ": " << got.y[i]
                << " against " << want.y[i];
          for (size_t r = 0; r < got.mean.size(); ++r) {
            ASSERT_TRUE(SameBits(got.mean[r], want.mean[r])) << "mean of row " << r << ", n " << n;
            ASSERT_TRUE(SameBits(got.inv[r], want.inv[r])) << "inv of row " << r << ", n " << n;
          }
          for (size_t i = c.x.size(); i < got.y.size(); ++i) ASSERT_EQ(got.y[i], kSentinel) << "wrote past the rows";
          if (!with_stats) {
            ASSERT_EQ(got.mean[0], kSentinel);
          }
        }
      }
    }
  }
}

TEST(LayerNormCentered, ScalarIsCloseToTheExactLayerNorm) {
  for (int64_t n : {8, 20, 768, 1030}) {
    const Case c = MakeCase(6, n, 77);
    const Result got = Normalize(&LayerNormRowsCenteredScalar, c, true, true);
    for (int64_t r = 0; r < c.rows; ++r) {
      const float* x = c.x.data() + r * n;
      double mean = 0, var = 0;
      for (int64_t i = 0; i < n; ++i) mean += x[i];
      mean /= static_cast<double>(n);
      for (int64_t i = 0; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
      const double inv = 1.0 / std::sqrt(var / static_cast<double>(n) + 1e-5);
      EXPECT_NEAR(got.mean[r], mean, 1e-6 * (1.0 + std::abs(mean)));
      EXPECT_NEAR(got.inv[r], inv, 1e-5 * inv);
      for (int64_t i = 0; i < n; ++i) {
        const double want = (x[i] - mean) * inv * c.scale[i] + c.bias[i];
        ASSERT_NEAR(got.y[r * n + i], want, 2e-5 * (1.0 + std::abs(want))) << "n " << n << " row " << r << " at " << i;
      }
    }
  }
}

class LayerNormCenteredVariant : public LinalgIsaVariant {};

TEST_P(LayerNormCenteredVariant, DispatchMatchesScalar) { CheckAgainstScalar(&LayerNormRowsCentered); }

INSTANTIATE_TEST_SUITE_P(AllIsas, LayerNormCenteredVariant, ::testing::Values("avx512", "avx2", "scalar"),
                         [](const auto& info) { return info.param; });

#if defined(__x86_64__)
TEST(LayerNormCentered, Avx2VariantMatchesScalar) {
  const auto isas = SupportedSgemmIsas();
  if (std::find(isas.begin(), isas.end(), "avx2") == isas.end()) GTEST_SKIP() << "no AVX2";
  CheckAgainstScalar(&LayerNormRowsCenteredAvx2);
}
#endif

}  // namespace
}  // namespace onyx::linalg
