// The scalar reference for the unary vector math: plain loops over std:: functions, in the
// numerically stable forms (sigmoid and softplus never overflow; the GELU forms keep their
// negative tails). The fallback for CPUs without AVX2 and the baseline of the benchmarks.
#include <cmath>
#include <cstddef>

#include "linalg/f32_vector_kernels.h"
#include "linalg/onnxruntime_math_constants.h"

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

// c[0] + c[1] x + ... + c[N-1] x^(N-1) by Horner steps in std::fma, as Poly in f32_vmath_impl.h.
template <size_t N>
float HornerFma(float x, const float (&c)[N]) {
  float p = c[N - 1];
  for (size_t i = N - 1; i-- > 0;) p = std::fma(p, x, c[i]);
  return p;
}

// f32_vmath_impl.h's ClampedOddRational: x clamped to [-clamp, clamp], then x P(x^2) / Q(x^2).
template <size_t NP, size_t NQ>
float ClampedOddRationalOf(float x, float clamp, const float (&p)[NP], const float (&q)[NQ]) {
  const float v = std::isnan(x) ? x : std::fmin(clamp, std::fmax(-clamp, x));
  const float v2 = v * v;
  return (HornerFma(v2, p) * v) / HornerFma(v2, q);
}

// ONNX Runtime's logistic (f32_vmath_impl.h, SigmoidRational): the same steps in std::fma.
float SigmoidRationalOf(float x) {
  namespace c = onnxruntime_math;
  const float r = ClampedOddRationalOf(x, c::kLogisticClamp, c::kLogisticP, c::kLogisticQ) + 0.5f;
  return std::isnan(r) ? r : std::fmin(1.0f, std::fmax(0.0f, r));
}

// ONNX Runtime's erf (f32_vmath_impl.h, ErfAsOnnxRuntime): the same steps in std::fma.
float ErfAsOnnxRuntimeOf(float x) {
  namespace c = onnxruntime_math;
  const float a = std::fabs(x);
  float m;
  if (a > c::kErfSplit) {
    const float t = std::fmax(c::kErfExpFloor, -std::fma(HornerFma(a, c::kErfBig), a, a));
    const float r = std::fma(c::kErfLog2e, t, c::kErfRoundShift) - c::kErfRoundShift;
    const float f = std::fma(r, c::kErfLn2Lo, std::fma(r, c::kErfLn2Hi, t));
    m = 1.0f - std::ldexp(HornerFma(f, c::kErfExp), static_cast<int>(r));
  } else {
    m = std::fma(HornerFma(a * a, c::kErfSmall), a, a);  // NaN lands here and stays NaN
  }
  return std::copysign(m, x);
}

// ONNX Runtime's tanh (f32_vmath_impl.h, TanhAsOnnxRuntime): the same steps in std::fma.
float TanhAsOnnxRuntimeOf(float x) {
  namespace c = onnxruntime_math;
  return ClampedOddRationalOf(x, c::kTanhClamp, c::kTanhP, c::kTanhQ);
}

}  // namespace

constexpr F32VUnaryKernels kF32VUnaryScalar = {
    "scalar",        &Map<ExpOf>,  &Map<LogOf>,      &Map<TanhOf>,    &Map<ErfOf>,
    &Map<SigmoidOf>, &Map<SiluOf>, &Map<SoftplusOf>, &Map<GeluErfOf>, &Map<GeluTanhOf>, &Map<SigmoidRationalOf>,
    &Map<ErfAsOnnxRuntimeOf>, &Map<TanhAsOnnxRuntimeOf>,
};

}  // namespace onyx::linalg
