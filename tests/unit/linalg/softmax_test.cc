// The fused row kernels of every vector-math ISA variant against double-precision references:
// softmax / log-softmax of rows and of [n, inner] column blocks, layer normalization and RMS
// normalization (including rows whose mean is large next to their spread).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "linalg/vector_math.h"
#include "linalg/vector_test_util.h"

namespace onyx::linalg {
namespace {

using testing::GuardedFloats;
using testing::VectorIsaGuard;

constexpr double kEps = 0x1p-24;  // float's unit roundoff

class RowKernelIsa : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    guard_ = std::make_unique<VectorIsaGuard>(GetParam());
    ASSERT_TRUE(guard_->ok()) << GetParam();
  }
  void TearDown() override { guard_.reset(); }
  std::unique_ptr<VectorIsaGuard> guard_;
};

// Softmax and log-softmax of x[i * stride] for i < n, in double.
void SoftmaxRef(const float* x, size_t n, size_t stride, std::vector<double>& soft, std::vector<double>& logsoft) {
  double mx = -std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < n; ++i) mx = std::max(mx, static_cast<double>(x[i * stride]));
  double sum = 0;
  for (size_t i = 0; i < n; ++i) sum += std::exp(x[i * stride] - mx);
  soft.resize(n);
  logsoft.resize(n);
  for (size_t i = 0; i < n; ++i) {
    soft[i] = std::exp(x[i * stride] - mx) / sum;
    logsoft[i] = (x[i * stride] - mx) - std::log(sum);
  }
}

// Float error bounds. Softmax: a few roundings (exp, the scale) relative to the value, exp's
// condition number |x - max| times the rounding of x - max, and the relative rounding of a
// float sum of n terms (2 sqrt(n) ulp: far past its typical size, far below its worst case).
// Log-softmax: roundings relative to the terms x - max and log(sum), plus the same sum
// rounding, which is absolute in log(sum).
double SoftmaxTol(double ref, double shifted, size_t n) {
  if (std::isinf(shifted)) return 0;  // a masked-out (-inf) element: exactly 0
  return kEps * ref * (6 + std::fabs(shifted) + 2 * std::sqrt(static_cast<double>(n))) + 3e-45;  // denormals
}
double LogSoftmaxTol(double ref, double shifted, size_t n) {
  return kEps * (4 * (std::fabs(ref) + std::fabs(shifted)) + 4 + 2 * std::sqrt(static_cast<double>(n)));
}

std::vector<float> SoftmaxInput(std::mt19937& rng, size_t n, int flavour) {
  std::vector<float> x(n);
  std::normal_distribution<float> dist(0.0f, flavour == 1 ? 30.0f : 3.0f);
  for (float& v : x) v = dist(rng) + (flavour == 2 ? 5000.0f : 0.0f);
  if (flavour == 3 && n > 2) x[n / 3] = -std::numeric_limits<float>::infinity();  // masked out
  return x;
}

TEST_P(RowKernelIsa, SoftmaxRows) {
  std::mt19937 rng(1);
  std::vector<size_t> lengths;
  for (size_t n = 1; n <= 100; ++n) lengths.push_back(n);
  for (size_t n : {128, 384, 512, 1000, 30522}) lengths.push_back(n);
  for (int flavour = 0; flavour < 4; ++flavour) {
    for (size_t n : lengths) {
      const std::vector<float> values = SoftmaxInput(rng, n, flavour);
      GuardedFloats x(n), y(n), z(n);
      std::copy(values.begin(), values.end(), x.data());
      std::vector<double> soft, logsoft;
      SoftmaxRef(x.data(), n, 1, soft, logsoft);
      SoftmaxRow(x.data(), y.data(), n);
      LogSoftmaxRow(x.data(), z.data(), n);
      const double mx = *std::max_element(values.begin(), values.end());
      for (size_t i = 0; i < n; ++i) {
        ASSERT_NEAR(y[i], soft[i], SoftmaxTol(soft[i], x[i] - mx, n)) << GetParam() << " n=" << n << " i=" << i;
        if (std::isinf(logsoft[i]))
          ASSERT_EQ(z[i], logsoft[i]) << GetParam() << " n=" << n;
        else
          ASSERT_NEAR(z[i], logsoft[i], LogSoftmaxTol(logsoft[i], x[i] - mx, n)) << GetParam() << " n=" << n;
      }
      SoftmaxRow(x.data(), x.data(), n);  // in place
      for (size_t i = 0; i < n; ++i)
        ASSERT_NEAR(x[i], soft[i], SoftmaxTol(soft[i], values[i] - mx, n)) << "in place n=" << n;
    }
  }
}

TEST_P(RowKernelIsa, SoftmaxRowSpecialValues) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  std::vector<float> y(5);
  const float with_nan[5] = {1, 2, nan, 3, 4};
  SoftmaxRow(with_nan, y.data(), 5);
  for (float v : y) EXPECT_TRUE(std::isnan(v)) << GetParam();
  LogSoftmaxRow(with_nan, y.data(), 5);
  for (float v : y) EXPECT_TRUE(std::isnan(v)) << GetParam();
  const float one_hot[5] = {-inf, -inf, 0, -inf, -inf};
  SoftmaxRow(one_hot, y.data(), 5);
  EXPECT_EQ(y, (std::vector<float>{0, 0, 1, 0, 0})) << GetParam();
  const float equal[5] = {7, 7, 7, 7, 7};
  SoftmaxRow(equal, y.data(), 5);
  for (float v : y) EXPECT_FLOAT_EQ(v, 0.2f) << GetParam();
}

// Scores far below the row's max: exp's denormal range (-87.3 .. -103.3), the kernels' clamp at
// -104, half-integer multiples of ln 2 (where the rounding of x / ln2 to n is a tie), and rows
// longer than a vector so that the SIMD body, not only the tail, sees them. A guard for the
// softmax's own exp (n rounded by adding 1.5 * 2^23); it passes before and after that change.
TEST_P(RowKernelIsa, SoftmaxRowDeepTail) {
  const float ln2 = 0.693147180559945f;
  std::vector<float> x = {0.0f, -87.0f, -87.5f, -90.0f, -95.25f, -100.0f, -103.0f, -103.9f, -104.0f, -104.5f,
                          -110.0f, -1000.0f, -0.5f * ln2, -1.5f * ln2, -2.5f * ln2, -100.5f * ln2, 1e-7f, -1e-7f};
  for (size_t rep = 0; rep < 3; ++rep) x.insert(x.end(), x.begin(), x.begin() + 18);
  const size_t n = x.size();
  std::vector<double> soft, logsoft;
  SoftmaxRef(x.data(), n, 1, soft, logsoft);
  std::vector<float> y(n), z(n);
  SoftmaxRow(x.data(), y.data(), n);
  LogSoftmaxRow(x.data(), z.data(), n);
  const double mx = *std::max_element(x.begin(), x.end());
  for (size_t i = 0; i < n; ++i) {
    ASSERT_NEAR(y[i], soft[i], SoftmaxTol(soft[i], x[i] - mx, n)) << GetParam() << " x=" << x[i];
    ASSERT_NEAR(z[i], logsoft[i], LogSoftmaxTol(logsoft[i], x[i] - mx, n)) << GetParam() << " x=" << x[i];
  }
}

TEST_P(RowKernelIsa, SoftmaxColumns) {
  std::mt19937 rng(2);
  for (size_t n : {1, 2, 3, 7, 16, 50}) {
    for (size_t inner : {1, 2, 5, 8, 16, 17, 33, 100}) {
      const std::vector<float> values = SoftmaxInput(rng, n * inner, 0);
      GuardedFloats x(n * inner), y(n * inner), z(n * inner);
      std::copy(values.begin(), values.end(), x.data());
      std::vector<float> scratch(2 * inner);
      SoftmaxColumns(x.data(), y.data(), n, inner, scratch.data());
      LogSoftmaxColumns(x.data(), z.data(), n, inner, scratch.data());
      for (size_t j = 0; j < inner; ++j) {
        std::vector<double> soft, logsoft;
        SoftmaxRef(x.data() + j, n, inner, soft, logsoft);
        double mx = -1e300;
        for (size_t i = 0; i < n; ++i) mx = std::max(mx, static_cast<double>(x[i * inner + j]));
        for (size_t i = 0; i < n; ++i) {
          ASSERT_NEAR(y[i * inner + j], soft[i], SoftmaxTol(soft[i], x[i * inner + j] - mx, n))
              << GetParam() << " " << n << "x" << inner;
          ASSERT_NEAR(z[i * inner + j], logsoft[i], LogSoftmaxTol(logsoft[i], x[i * inner + j] - mx, n))
              << GetParam() << " " << n << "x" << inner;
        }
      }
    }
  }
}

// ---- layer normalization and RMS normalization ----

struct NormRef {
  std::vector<double> y;
  double mean = 0, inv = 0;
};

NormRef LayerNormRef(const float* x, size_t n, const float* w, const float* b, float eps, bool rms) {
  NormRef r;
  double mean = 0;
  if (!rms) {
    for (size_t i = 0; i < n; ++i) mean += x[i];
    mean /= static_cast<double>(n);
  }
  double var = 0;
  for (size_t i = 0; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
  var /= static_cast<double>(n);
  r.mean = mean;
  r.inv = 1.0 / std::sqrt(var + eps);
  for (size_t i = 0; i < n; ++i) r.y.push_back((x[i] - mean) * r.inv * (w ? w[i] : 1.0) + (b ? b[i] : 0.0));
  return r;
}

TEST_P(RowKernelIsa, LayerNormAndRmsNormRows) {
  std::mt19937 rng(4);
  std::vector<size_t> lengths;
  for (size_t n = 1; n <= 100; ++n) lengths.push_back(n);
  for (size_t n : {768, 1024, 4096, 5000}) lengths.push_back(n);
  for (int flavour = 0; flavour < 3; ++flavour) {
    for (size_t n : lengths) {
      // flavour 1: mean 1000 with spread 1 (catastrophic for float E[x^2] - E[x]^2).
      std::normal_distribution<float> dist(flavour == 1 ? 1000.0f : 0.5f, flavour == 2 ? 1e-3f : 1.0f);
      std::normal_distribution<float> param(0.0f, 1.0f);
      GuardedFloats x(n), w(n), b(n), y(n);
      for (size_t i = 0; i < n; ++i) x[i] = dist(rng), w[i] = param(rng), b[i] = param(rng);
      const float eps = flavour == 2 ? 1e-12f : 1e-5f;
      for (bool rms : {false, true}) {
        for (bool affine : {true, false}) {
          const float* wp = affine ? w.data() : nullptr;
          const float* bp = affine && !rms ? b.data() : nullptr;
          const NormRef ref = LayerNormRef(x.data(), n, wp, bp, eps, rms);
          float mean = -1, inv = -1;
          if (rms)
            RmsNormRow(x.data(), y.data(), n, wp, eps, &inv);
          else
            LayerNormRow(x.data(), y.data(), n, wp, bp, eps, &mean, &inv);
          if (!rms) {
            ASSERT_NEAR(mean, ref.mean, 2 * kEps * std::fabs(ref.mean) + 1e-30) << GetParam() << " n=" << n;
          }
          ASSERT_NEAR(inv, ref.inv, 1e-5 * ref.inv) << GetParam() << " n=" << n << " rms=" << rms;
          for (size_t i = 0; i < n; ++i) {
            // A few roundings of the affine step and of the float inverse deviation; a large
            // mean must cost nothing.
            const double normalized = (x[i] - ref.mean) * ref.inv;
            const double scale = affine ? std::fabs(w[i]) : 1.0;
            const double tol = 8 * kEps * (std::fabs(normalized) * scale + (bp ? std::fabs(b[i]) : 0.0)) + 1e-30;
            ASSERT_NEAR(y[i], ref.y[i], tol)
                << GetParam() << " n=" << n << " i=" << i << " rms=" << rms << " flavour=" << flavour;
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, RowKernelIsa, ::testing::ValuesIn(SupportedVectorIsas()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace onyx::linalg
