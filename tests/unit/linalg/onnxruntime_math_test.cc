// VecSigmoidAsOnnxRuntime, VecErfAsOnnxRuntime and VecTanhAsOnnxRuntime (linalg/vector_math.h):
// every vector ISA gives, bit for bit, the function written here from its definition (the
// logistic: x clamped to [-18, 18], x P(x^2) / Q(x^2) + 1/2 with Horner steps in std::fma, clamped
// to [0, 1]; the erf: a polynomial to 0.921875, 1 - 2^r e(f) beyond; the tanh: x clamped to
// [-9, 9], x P(x^2) / Q(x^2)) over random and swept inputs, the clamp and split
// points, zeros, infinities and NaN, at every length up to 40 (vector tails); and each stays close
// to the exact function (2e-7, 1e-6 and 1e-6). That these are ONNX Runtime's is
// tests/python/quantization/test_onnxruntime_math_in_quantized_graph.py's check.
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

float Erf(float x) {
  const float a = std::fabs(x);
  if (!(a > 0.921875f)) {  // NaN too
    const float s = a * a;
    const float coefs[] = {4.99339588e-3f, -2.67667342e-2f, 1.12818025e-1f, -3.76124859e-1f, 1.28379151e-1f};
    float p = -5.99104969e-4f;
    for (float c : coefs) p = std::fma(p, s, c);
    return std::copysign(std::fma(p, a, a), x);
  }
  const float q_coefs[] = {-3.83208680e-4f, 3.88393435e-3f, -2.42545605e-2f, 1.06777847e-1f, 6.34846687e-1f,
                           1.28717512e-1f};
  float q = 1.72948930e-5f;
  for (float c : q_coefs) q = std::fma(q, a, c);
  float t = -std::fma(q, a, a);
  if (t < -88.3762626647949f) t = -88.3762626647949f;
  const float shifted = std::fma(1.44269504088896341f, t, 12582912.0f);
  const float r = shifted - 12582912.0f;  // round(t / ln2)
  const float f = std::fma(r, -1.42860677e-6f, std::fma(r, -6.93145752e-1f, t));
  const float e_coefs[] = {8.37550033e-3f, 4.16689515e-2f, 1.66664466e-1f, 4.99999851e-1f, 1.0f, 1.0f};
  float e = 1.38319808e-3f;
  for (float c : e_coefs) e = std::fma(e, f, c);
  return std::copysign(1.0f - std::ldexp(e, static_cast<int>(r)), x);
}

float Tanh(float x) {
  if (std::isnan(x)) return x;
  const float v = x < -9.0f ? -9.0f : (x > 9.0f ? 9.0f : x);
  const float v2 = v * v;
  const float p_coefs[] = {2.00018790482477e-13f, -8.60467152213735e-11f, 5.12229709037114e-08f,
                           1.48572235717979e-05f, 6.37261928875436e-04f,  4.89352455891786e-03f};
  const float q_coefs[] = {1.18534705686654e-04f, 2.26843463243900e-03f, 4.89352518554385e-03f};
  float p = -2.76076847742355e-16f, q = 1.19825839466702e-06f;
  for (float c : p_coefs) p = std::fma(p, v2, c);
  for (float c : q_coefs) q = std::fma(q, v2, c);
  const float pv = p * v;
  return pv / q;
}

std::vector<float> Inputs() {
  std::vector<float> x = {-18.0f, 18.0f, -18.5f, 18.5f, 0.0f, -0.0f, 1e-30f, -1e-30f, 1e-8f, 100.0f, -100.0f, 0.921875f,
                          -0.921875f, 3.725f, 9.5f, 1e30f,
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

struct Case {
  const char* name;
  void (*fn)(const float*, float*, size_t);
  float (*formula)(float);
  double (*exact)(double);
  double tolerance;
};

const Case kCases[] = {
    {"sigmoid", &VecSigmoidAsOnnxRuntime, &Logistic, [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, 2e-7},
    {"erf", &VecErfAsOnnxRuntime, &Erf, [](double x) { return std::erf(x); }, 1e-6},
    {"tanh", &VecTanhAsOnnxRuntime, &Tanh, [](double x) { return std::tanh(x); }, 1e-6},
};

constexpr size_t kSpecials = 19;  // the fixed values at the front of Inputs()

class OnnxRuntimeMathIsa : public ::testing::TestWithParam<std::string> {};

TEST_P(OnnxRuntimeMathIsa, MatchesTheFormulaBitForBit) {
  testing::VectorIsaGuard guard(GetParam());
  ASSERT_TRUE(guard.ok()) << GetParam();
  const std::vector<float> x = Inputs();
  for (const Case& c : kCases) {
    std::vector<float> y(x.size());
    c.fn(x.data(), y.data(), x.size());
    int failures = 0;
    for (size_t i = 0; i < x.size() && failures < 10; ++i) {
      const float want = c.formula(x[i]);
      if (!SameBits(y[i], want)) {
        ADD_FAILURE() << GetParam() << " " << c.name << ": x " << x[i] << " gives " << y[i] << ", want " << want;
        ++failures;
      }
      if (!std::isnan(x[i])) {
        EXPECT_NEAR(y[i], c.exact(x[i]), c.tolerance) << c.name << " x " << x[i];
      }
    }
    // Every length up to 40, in place: the tails.
    for (size_t n = 0; n <= 40; ++n) {
      std::vector<float> v(x.begin() + kSpecials, x.begin() + kSpecials + static_cast<std::ptrdiff_t>(n));
      c.fn(v.data(), v.data(), n);
      for (size_t i = 0; i < n; ++i)
        ASSERT_TRUE(SameBits(v[i], c.formula(x[kSpecials + i]))) << c.name << " length " << n << " at " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, OnnxRuntimeMathIsa, ::testing::ValuesIn(SupportedVectorIsas()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace onyx::linalg
