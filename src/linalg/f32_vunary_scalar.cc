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

}  // namespace

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

constexpr F32VUnaryKernels kF32VUnaryScalar = {
    "scalar",        &Map<ExpOf>,  &Map<LogOf>,      &Map<TanhOf>,    &Map<ErfOf>,
    &Map<SigmoidOf>, &Map<SiluOf>, &Map<SoftplusOf>, &Map<GeluErfOf>, &Map<GeluTanhOf>, &Map<SigmoidRationalOf>,
};

}  // namespace onyx::linalg
