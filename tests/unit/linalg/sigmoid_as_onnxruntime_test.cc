// VecSigmoidAsOnnxRuntime (linalg/vector_math.h): every vector ISA gives, bit for bit, the
// logistic written here from its definition (x clamped to [-18, 18], x P(x^2) / Q(x^2) + 1/2 with
// Horner steps in std::fma, clamped to [0, 1]) over random and swept inputs, the clamp points,
// zeros, infinities and NaN, at every length up to 40 (vector tails); and it stays within 2e-7 of
// the sigmoid. That this is ONNX Runtime's logistic is
// tests/python/quantization/test_sigmoid_in_quantized_graph.py's check.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "linalg/vector_math.h"
#include "linalg/vector_test_util.h"

namespace onyx::linalg {
namespace {

float Logistic(float x) {
  if (std::isnan(x)) return x;
  const float v = x < -18.0f ? -18.0f : (x > 18.0f ? 18.0f : x);
  const float v2 = v * v;
  const float p_coefs[] = {1.15627324459942e-07f, 6.08574864600143e-05f, 8.51377133304701e-03f,
                           2.48287947061529e-01f};
  const float q_coefs[] = {5.76102136993427e-09f, 6.29106785017040e-06f, 1.70198817374094e-03f,
                           1.16817656904453e-01f, 9.93151921023180e-01f};
  float p = 4.37031012579801e-11f, q = 6.10247389755681e-13f;
  for (float c : p_coefs) p = std::fma(p, v2, c);
  for (float c : q_coefs) q = std::fma(q, v2, c);
  const float pv = p * v;
  const float quotient = pv / q;
  const float r = quotient + 0.5f;
  return r < 0.0f ? 0.0f : (r > 1.0f ? 1.0f : r);
}

std::vector<float> Inputs() {
  std::vector<float> x = {-18.0f, 18.0f, -18.5f, 18.5f, 0.0f, -0.0f, 1e-30f, -1e-30f, 1e-8f, 100.0f, -100.0f,
                          std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN()};
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> wide(-25.0f, 25.0f), narrow(-2.0f, 2.0f);
  for (int i = 0; i < 20000; ++i) x.push_back(wide(rng)), x.push_back(narrow(rng));
  for (uint32_t bits = 0; bits < 0xFFFFFFFFu - 0x10000u; bits += 0x10001u) {  // a sweep of bit patterns
    float f;
    std::memcpy(&f, &bits, sizeof f);
    x.push_back(f);
  }
  return x;
}

bool SameBits(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, sizeof(float)) == 0;
}

class SigmoidAsOnnxRuntimeIsa : public ::testing::TestWithParam<std::string> {};

TEST_P(SigmoidAsOnnxRuntimeIsa, MatchesTheFormulaBitForBit) {
  testing::VectorIsaGuard guard(GetParam());
  ASSERT_TRUE(guard.ok()) << GetParam();
  const std::vector<float> x = Inputs();
  std::vector<float> y(x.size());
  VecSigmoidAsOnnxRuntime(x.data(), y.data(), x.size());
  int failures = 0;
  for (size_t i = 0; i < x.size() && failures < 10; ++i) {
    const float want = Logistic(x[i]);
    if (!SameBits(y[i], want)) {
      ADD_FAILURE() << GetParam() << ": x " << x[i] << " gives " << y[i] << ", want " << want;
      ++failures;
    }
    if (!std::isnan(x[i])) {
      const double exact = 1.0 / (1.0 + std::exp(-static_cast<double>(x[i])));
      EXPECT_NEAR(y[i], exact, 2e-7) << "x " << x[i];
    }
  }
  // Every length up to 40, in place: the tails.
  for (size_t n = 0; n <= 40; ++n) {
    std::vector<float> v(x.begin() + 14, x.begin() + 14 + static_cast<std::ptrdiff_t>(n));
    VecSigmoidAsOnnxRuntime(v.data(), v.data(), n);
    for (size_t i = 0; i < n; ++i) ASSERT_TRUE(SameBits(v[i], Logistic(x[14 + i]))) << "length " << n << " at " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, SigmoidAsOnnxRuntimeIsa, ::testing::ValuesIn(SupportedVectorIsas()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace onyx::linalg
