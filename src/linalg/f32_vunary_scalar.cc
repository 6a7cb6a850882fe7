// The scalar reference for the unary vector math: plain loops over std:: functions, in the
// numerically stable forms (sigmoid and softplus never overflow; the GELU forms keep their
// negative tails). The fallback for CPUs without AVX2 and the baseline of the benchmarks.
#include <cmath>
#include <initializer_list>

#include "linalg/f32_vector_kernels.h"

namespace onyx::linalg {
namespace {

float SigmoidOf(float x) {
  const float e = std::exp(-std::fabs(x));
  const float r = 1.0f / (1.0f + e);
  return x < 0.0f ? e * r : r;
}

template <float (*F)(float)>
void Map(const float* x, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = F(x[i]);
}

float ExpOf(float x) { return std::exp(x); }
float LogOf(float x) { return std::log(x); }
float TanhOf(float x) { return std::tanh(x); }
float ErfOf(float x) { return std::erf(x); }
float SiluOf(float x) { return x * SigmoidOf(x); }
float SoftplusOf(float x) { return std::fmax(x, 0.0f) + std::log1p(std::exp(-std::fabs(x))); }
// 1 + erf(z) = erfc(-z), without the cancellation of 1 + erf for negative z; z in double, as
// rounding z to float costs ~z^2 ulp of erfc in the tail.
float GeluErfOf(float x) { return static_cast<float>(0.5 * x * std::erfc(-x * 0.70710678118654752)); }
// 0.5 x (1 + tanh(y)) = x sigmoid(2y).
float GeluTanhOf(float x) { return x * SigmoidOf(1.5957691216057308f * (x + 0.044715f * x * x * x)); }

// ONNX Runtime's logistic (f32_vmath_impl.h, SigmoidRational): the same Horner steps in std::fma.
float SigmoidRationalOf(float x) {
  const float v = std::isnan(x) ? x : std::fmin(18.0f, std::fmax(-18.0f, x));
  const float v2 = v * v;
  float p = 4.37031012579801e-11f;
  for (float c : {1.15627324459942e-07f, 6.08574864600143e-05f, 8.51377133304701e-03f, 2.48287947061529e-01f})
    p = std::fma(p, v2, c);
  float q = 6.10247389755681e-13f;
  for (float c : {5.76102136993427e-09f, 6.29106785017040e-06f, 1.70198817374094e-03f, 1.16817656904453e-01f,
                  9.93151921023180e-01f})
    q = std::fma(q, v2, c);
  const float r = (p * v) / q + 0.5f;
  return std::isnan(r) ? r : std::fmin(1.0f, std::fmax(0.0f, r));
}

// ONNX Runtime's erf (f32_vmath_impl.h, ErfAsOnnxRuntime): the same steps in std::fma.
float ErfAsOnnxRuntimeOf(float x) {
  const float a = std::fabs(x);
  float m;
  if (a > 0.921875f) {
    float q = 1.72948930e-5f;
    for (float c : {-3.83208680e-4f, 3.88393435e-3f, -2.42545605e-2f, 1.06777847e-1f, 6.34846687e-1f, 1.28717512e-1f})
      q = std::fma(q, a, c);
    const float t = std::fmax(-88.3762626647949f, -std::fma(q, a, a));
    const float r = std::fma(1.44269504088896341f, t, 1.25829120e+7f) - 1.25829120e+7f;
    const float f = std::fma(r, -1.42860677e-6f, std::fma(r, -6.93145752e-1f, t));
    float e = 1.38319808e-3f;
    for (float c : {8.37550033e-3f, 4.16689515e-2f, 1.66664466e-1f, 4.99999851e-1f, 1.0f, 1.0f}) e = std::fma(e, f, c);
    m = 1.0f - std::ldexp(e, static_cast<int>(r));
  } else {
    const float s = a * a;
    float p = -5.99104969e-4f;
    for (float c : {4.99339588e-3f, -2.67667342e-2f, 1.12818025e-1f, -3.76124859e-1f, 1.28379151e-1f})
      p = std::fma(p, s, c);
    m = std::fma(p, a, a);  // NaN lands here and stays NaN
  }
  return std::copysign(m, x);
}

// ONNX Runtime's tanh (f32_vmath_impl.h, TanhAsOnnxRuntime): the same steps in std::fma.
float TanhAsOnnxRuntimeOf(float x) {
  const float v = std::isnan(x) ? x : std::fmin(9.0f, std::fmax(-9.0f, x));
  const float v2 = v * v;
  float p = -2.76076847742355e-16f;
  for (float c : {2.00018790482477e-13f, -8.60467152213735e-11f, 5.12229709037114e-08f, 1.48572235717979e-05f,
                  6.37261928875436e-04f, 4.89352455891786e-03f})
    p = std::fma(p, v2, c);
  float q = 1.19825839466702e-06f;
  for (float c : {1.18534705686654e-04f, 2.26843463243900e-03f, 4.89352518554385e-03f}) q = std::fma(q, v2, c);
  return (p * v) / q;
}

}  // namespace

constexpr F32VUnaryKernels kF32VUnaryScalar = {
    "scalar",        &Map<ExpOf>,  &Map<LogOf>,      &Map<TanhOf>,    &Map<ErfOf>,
    &Map<SigmoidOf>, &Map<SiluOf>, &Map<SoftplusOf>, &Map<GeluErfOf>, &Map<GeluTanhOf>, &Map<SigmoidRationalOf>,
    &Map<ErfAsOnnxRuntimeOf>, &Map<TanhAsOnnxRuntimeOf>,
};

}  // namespace onyx::linalg
