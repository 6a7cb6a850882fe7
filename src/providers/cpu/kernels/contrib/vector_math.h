// Branch-free float approximations of exp, tanh, erf and the logistic function for the
// transformer kernels (softmax, Gelu, FastGelu, QuickGelu). Written with plain arithmetic and
// mask selects so loops over them auto-vectorize; accuracy is a few float ulps (exp, tanh near 1) or
// ~2e-7 absolute (erf). Microkernels in src/linalg may replace them later.
#pragma once

#include <cstdint>

namespace onyx::contrib::vmath {

// c ? a : b through an integer mask: GCC leaves float selects as branches (they may trap), which
// would stop the loops from vectorizing; compares turned into masks vectorize.
inline float Select(bool c, float a, float b) {
  const int32_t m = -static_cast<int32_t>(c);
  return __builtin_bit_cast(float, (__builtin_bit_cast(int32_t, a) & m) | (__builtin_bit_cast(int32_t, b) & ~m));
}
// NaN in `a` passes through both.
inline float Min(float a, float b) { return Select(b < a, b, a); }
inline float Max(float a, float b) { return Select(a < b, b, a); }

// e^x: x = n ln2 + r with |r| <= ln2 / 2 (Cody-Waite split of ln2), e^r by its degree-7 Taylor
// polynomial (relative error < 6e-9), 2^n assembled in the exponent bits. 0 below -87.3, inf
// above 88.72 (in between the result is capped at e^88.3).
inline float Exp(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693359375f;  // 9 significant bits: n * kLn2Hi is exact
  constexpr float kLn2Lo = -2.12194440e-4f;
  constexpr float kRound = 12582912.0f;   // 1.5 * 2^23: adding it rounds to an integer
  const float xc = Min(Max(x, -87.3f), 88.3f);
  const float t = xc * kLog2e + kRound;
  const float n = t - kRound;
  const float r = (xc - n * kLn2Hi) - n * kLn2Lo;
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const int32_t ni = __builtin_bit_cast(int32_t, t) - __builtin_bit_cast(int32_t, kRound);
  const float scale = __builtin_bit_cast(float, (ni + 127) << 23);
  const float e = Select(x < -87.3f, 0.0f, p * scale);
  return Select(x > 88.72284f, __builtin_inff(), e);  // overflow, as expf
}

// tanh(x) = 1 - 2 / (e^(2x) + 1); saturates to +-1 without overflow.
inline float Tanh(float x) { return 1.0f - 2.0f / (Exp(2.0f * x) + 1.0f); }

// 1 / (1 + e^-x).
inline float Logistic(float x) { return 1.0f / (1.0f + Exp(-x)); }

// erf(x) by Abramowitz & Stegun 7.1.26 (|error| <= 1.5e-7), odd-symmetric.
inline float Erf(float x) {
  const float a = __builtin_fabsf(x);
  const float t = 1.0f / (1.0f + 0.3275911f * a);
  float p = 1.061405429f;
  p = p * t - 1.453152027f;
  p = p * t + 1.421413741f;
  p = p * t - 0.284496736f;
  p = p * t + 0.254829592f;
  const float y = 1.0f - p * t * Exp(-a * a);
  return __builtin_copysignf(y, x);
}

}  // namespace onyx::contrib::vmath
