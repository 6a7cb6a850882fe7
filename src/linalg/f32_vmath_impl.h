// Vector math written once over a SIMD wrapper S (f32_simd_avx2.h, f32_simd_avx512.h) and
// instantiated by each ISA file with that ISA's compiler flags. Include only from an ISA file,
// after its wrapper. Everything has internal linkage on purpose (see f32_simd_avx512.h).
//
// The polynomial coefficients are minimax fits (relative error, Lawson's algorithm in double)
// made for this file; each stays well under float's rounding error on its interval.
#pragma once

#include <cstddef>

#include "linalg/f32_erfcx_poly.h"
#include "linalg/onnxruntime_math_constants.h"

namespace onyx::linalg {
namespace {

// c[0] + c[1] x + ... + c[N-1] x^(N-1), by Horner's rule.
template <class S, size_t N>
inline typename S::V Poly(typename S::V x, const float (&c)[N]) {
  typename S::V p = S::Set1(c[N - 1]);
  for (size_t i = N - 1; i-- > 0;) p = S::Fma(p, x, S::Set1(c[i]));
  return p;
}

constexpr float kLn2Hi = 0.693145751953125f;  // 16 significant bits: n * kLn2Hi is exact for |n| < 256
constexpr float kLn2Lo = 1.42860682030941723212e-6f;
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kInf = __builtin_inff();
constexpr float kNaN = __builtin_nanf("");

// exp(r) = 1 + r + r^2 P(r) on [-ln2/2, ln2/2].
constexpr float kExpP[] = {0.49999993451691743f, 0.16666520689750092f, 0.0416683873646793f, 0.008368709831864468f,
                           0.0013814613095085408f};

// exp(x) = 2^n exp(r), n = round(x / ln2), for x in [-87.3, 88] (no clamps: 2^n and the result
// are normal floats there).
template <class S>
inline typename S::V ExpInRange(typename S::V x) {
  using V = typename S::V;
  const V n = S::Round(S::Mul(x, S::Set1(kLog2e)));
  V r = S::Fnma(n, S::Set1(kLn2Hi), x);
  r = S::Fnma(n, S::Set1(kLn2Lo), r);
  const V p = S::Fma(S::Mul(r, r), Poly<S>(r, kExpP), r);
  return S::Scale2(S::Add(p, S::Set1(1.0f)), n);
}

// exp of any x. Past the clamps the result is already inf or 0; NaN passes the clamps (x is the
// second operand) and the arithmetic.
template <class S>
inline typename S::V Exp(typename S::V x) {
  return ExpInRange<S>(S::Min(S::Set1(89.0f), S::Max(S::Set1(-104.0f), x)));
}

// log1p(f) = f - f^2 / 2 + f^3 Q(f) on [sqrt(1/2) - 1, sqrt(2) - 1].
constexpr float kLogQ[] = {0.333333317077f,      -0.25000821034345005f, 0.20001226876377223f, -0.16623357343735623f,
                           0.14201757999102477f, -0.131601823954678f,   0.1276157704518495f,  -0.0763449652969294f};

// log(x) for positive finite x (denormals included): x = m 2^e, log x = e ln2 + log1p(m - 1).
template <class S>
inline typename S::V LogFinite(typename S::V x) {
  using V = typename S::V;
  V m, e;
  S::SplitExponent(x, m, e);
  const V f = S::Sub(m, S::Set1(1.0f));  // exact
  const V f2 = S::Mul(f, f);
  // The small terms first, the two big ones (f and e * ln2_hi, both exact) last.
  V r = S::Fnma(f2, S::Set1(0.5f), S::Mul(e, S::Set1(kLn2Lo)));
  r = S::Fma(S::Mul(f2, f), Poly<S>(f, kLogQ), r);
  return S::Fma(e, S::Set1(kLn2Hi), S::Add(r, f));
}

template <class S>
inline typename S::V Log(typename S::V x) {
  using V = typename S::V;
  V y = LogFinite<S>(x);
  y = S::Select(S::Equal(x, S::Zero()), S::Set1(-kInf), y);
  y = S::Select(S::Equal(x, S::Set1(kInf)), x, y);
  return S::Select(S::Or(S::Less(x, S::Zero()), S::IsNan(x)), S::Set1(kNaN), y);
}

// log1p(u) for u in [0, 1]: log(1 + u) plus the part of u that the rounding of 1 + u lost.
template <class S>
inline typename S::V Log1pUnit(typename S::V u) {
  using V = typename S::V;
  const V w = S::Add(u, S::Set1(1.0f));
  const V lost = S::Sub(u, S::Sub(w, S::Set1(1.0f)));
  return S::Add(LogFinite<S>(w), S::Div(lost, w));
}

// 1 / (1 + exp(-x)) = r for x >= 0 and e r for x < 0, with e = exp(-|x|) and r = 1 / (1 + e):
// exp never overflows and the negative tail keeps its relative accuracy.
template <class S>
inline typename S::V Sigmoid(typename S::V x) {
  using V = typename S::V;
  const V e = Exp<S>(S::Neg(S::Abs(x)));
  const V r = S::Div(S::Set1(1.0f), S::Add(e, S::Set1(1.0f)));
  return S::Select(S::Less(x, S::Zero()), S::Mul(e, r), r);
}

// x clamped to [-clamp, clamp] (NaN stays NaN), then x P(x^2) / Q(x^2) with Horner steps in fma:
// the common body of ONNX Runtime's logistic and tanh below.
template <class S, size_t NP, size_t NQ>
inline typename S::V ClampedOddRational(typename S::V x, float clamp, const float (&p)[NP], const float (&q)[NQ]) {
  using V = typename S::V;
  const V v = S::Min(S::Set1(clamp), S::Max(S::Set1(-clamp), x));
  const V v2 = S::Mul(v, v);
  return S::Div(S::Mul(Poly<S>(v2, p), v), Poly<S>(v2, q));
}

// ONNX Runtime's logistic (MLAS's, with Eigen's coefficients): x clamped to [-18, 18], then
// x P(x^2) / Q(x^2) + 1/2 with Horner steps in fma, clamped to [0, 1]. Up to about 3e5 ulp from
// the sigmoid where it is tiny; only for values that are quantized next, whose codes must be
// ONNX Runtime's (vector_math.h, VecSigmoidAsOnnxRuntime).
template <class S>
inline typename S::V SigmoidRational(typename S::V x) {
  namespace c = onnxruntime_math;
  const typename S::V r =
      S::Add(ClampedOddRational<S>(x, c::kLogisticClamp, c::kLogisticP, c::kLogisticQ), S::Set1(0.5f));
  return S::Min(S::Set1(1.0f), S::Max(S::Zero(), r));
}

// ONNX Runtime's erf (MLAS's, after the faithfully rounded erff of the reference its source
// names): |x| <= 0.921875: |x| + |x| P(x^2); beyond: 1 - exp(-(|x| + |x| Q(|x|))), that exp as
// 2^r e(f) with r = round(t / ln2) (by adding and subtracting 1.5 * 2^23) and f = t - r ln2 in two
// fmas; every polynomial by Horner steps in fma; then x's sign. Only for values that are
// quantized next (vector_math.h, VecErfAsOnnxRuntime).
template <class S>
inline typename S::V ErfAsOnnxRuntime(typename S::V x) {
  namespace c = onnxruntime_math;
  using V = typename S::V;
  const V a = S::Abs(x);
  const V small = S::Fma(Poly<S>(S::Mul(a, a), c::kErfSmall), a, a);
  const V t = S::Max(S::Set1(c::kErfExpFloor), S::Neg(S::Fma(Poly<S>(a, c::kErfBig), a, a)));
  const V shift = S::Set1(c::kErfRoundShift);
  const V r = S::Sub(S::Fma(S::Set1(c::kErfLog2e), t, shift), shift);
  const V f = S::Fma(r, S::Set1(c::kErfLn2Lo), S::Fma(r, S::Set1(c::kErfLn2Hi), t));
  const V big = S::Sub(S::Set1(1.0f), S::Scale2(Poly<S>(f, c::kErfExp), r));
  return S::WithSignOf(S::Select(S::Less(S::Set1(c::kErfSplit), a), big, small), x);
}

// ONNX Runtime's tanh (MLAS's, with Eigen's coefficients): x clamped to [-9, 9], then
// x P(x^2) / Q(x^2) with Horner steps in fma. Only for values that are quantized next
// (vector_math.h, VecTanhAsOnnxRuntime).
template <class S>
inline typename S::V TanhAsOnnxRuntime(typename S::V x) {
  namespace c = onnxruntime_math;
  return ClampedOddRational<S>(x, c::kTanhClamp, c::kTanhP, c::kTanhQ);
}

// tanh(x) = x + x^3 P(x^2) on [0, 0.625].
constexpr float kTanhP[] = {-0.33333330802743566f, 0.13333206008652945f,   -0.05394676308544357f,
                            0.02170070331666772f,  -0.008177398418159969f, 0.002142961974482286f};

// Small |x|: the odd polynomial (no cancellation); otherwise sign(x) (1 - 2 / (exp(2|x|) + 1)),
// which reaches exactly +-1 once exp overflows.
template <class S>
inline typename S::V Tanh(typename S::V x) {
  using V = typename S::V;
  const V ax = S::Abs(x);
  const V z = S::Mul(x, x);
  const V small = S::Fma(S::Mul(x, z), Poly<S>(z, kTanhP), x);
  const V e = Exp<S>(S::Add(ax, ax));
  const V large = S::Sub(S::Set1(1.0f), S::Div(S::Set1(2.0f), S::Add(e, S::Set1(1.0f))));
  return S::Select(S::Less(ax, S::Set1(0.625f)), small, S::WithSignOf(large, x));
}

// erf(x) = x P(x^2) on [0, 0.875].
constexpr float kErfP[] = {1.1283791668695413f,   -0.37612636066369387f,   0.11283733009040561f, -0.026861584985282766f,
                           0.005206748033926012f, -0.0008211110176265801f, 8.67541653105583e-05f};
// erfc(z) = exp(-z^2) R(t), t = 1 / (1 + z / 2), on [0.875, 10.5].
constexpr float kErfcR[] = {2.7676393865351824e-06f, 0.2820064995075303f,   0.28332479333801575f, 0.2369950434627999f,
                            0.226196928558389f,      -0.08286298282499308f, 0.36175149184549843f, -0.5618058014983225f,
                            0.32054108384875196f,    -0.06611577499783787f};

// erfc(z) for z in [0.875, 10.5], accurate relative to itself. z2_hi + z2_lo = z^2 exactly (or
// nearly), which keeps exp(-z^2) accurate where z^2 is large.
template <class S>
inline typename S::V ErfcTail(typename S::V z, typename S::V z2_hi, typename S::V z2_lo) {
  using V = typename S::V;
  const V t = S::Div(S::Set1(1.0f), S::Fma(z, S::Set1(0.5f), S::Set1(1.0f)));
  const V e = Exp<S>(S::Neg(z2_hi));
  return S::Mul(S::Fnma(e, z2_lo, e), Poly<S>(t, kErfcR));  // exp(-hi - lo) = exp(-hi) (1 - lo)
}

template <class S>
inline typename S::V Erf(typename S::V x) {
  using V = typename S::V;
  // Past |x| = 4 erf rounds to +-1; the clamp keeps exp's argument small. NaN passes it.
  const V ax = S::Min(S::Set1(4.0f), S::Abs(x));
  const V z2 = S::Mul(ax, ax);
  const V small = S::Mul(x, Poly<S>(z2, kErfP));
  const V large = S::Sub(S::Set1(1.0f), ErfcTail<S>(ax, z2, S::Fms(ax, ax, z2)));
  return S::Select(S::Less(ax, S::Set1(0.875f)), small, S::WithSignOf(large, x));
}

// 0.5 x (1 + erf(x / sqrt 2)) = 0.5 x erfc(-x / sqrt 2), with erfc(|z|) = exp(-z^2) R(t) for
// every z (kErfcxR): 1 + erf is erfc(|z|) for x < 0, relative to itself so that the negative
// tail keeps its digits, and 2 - erfc(|z|) in [1, 2] for x >= 0. One formula with no small-|z|
// branch, a reciprocal estimate instead of a division and an unclamped exp: 1.47 -> 1.89 G
// values/s with AVX-512, 1.01 -> 1.18 with AVX2 (vector_math_bench), within 6.2 ulps on a dense
// sweep (the old two-branch formula's bound too). The f32 GEMM's fused GELU is this function
// too (f32_gemm_tile_impl.h), so fusing never changes a bit.
//
// kGeluErfTail: where |GELU(-|x|)| = (|x| / 2) erfc(|x| / sqrt 2) falls below the smallest
// normal float. Past it the erfc part is computed from 0 instead, so positive results are x and
// negative ones -0 (NaN at -inf, as the formula gives), and no lane there comes near the
// denormals, which cost a microcode assist each (clamping |x| to 13.2 instead made GEMM + bias
// + GELU of values up to |30| 25% slower).
constexpr float kGeluErfTail = 13.146247f;  // the first float past it

template <class S>
inline typename S::V GeluErf(typename S::V x) {
  using V = typename S::V;
  const auto past_tail = S::Less(S::Set1(kGeluErfTail), S::Abs(x));
  const V ax = S::Select(past_tail, S::Zero(), S::Abs(x));
  const V az = S::Mul(ax, S::Set1(0.70710678118654752f));
  const V half = S::Mul(ax, S::Set1(-0.5f));  // -|x| / 2, exact
  // -z^2 = -x^2 / 2 = hi + lo from x itself (exact halves): hi rounded, lo exact.
  const V z2_hi = S::Mul(ax, half);
  const V z2_lo = S::Fms(ax, half, z2_hi);
  const V t = S::Reciprocal(S::Fma(az, S::Set1(0.5f), S::Set1(1.0f)));
  const V e = ExpInRange<S>(z2_hi);  // -z^2 >= -86.5 (or NaN)
  // -h r = (|x| / 2) erfc(|x| / sqrt 2); exp(hi + lo) = exp(hi) (1 + lo).
  const V h = S::Mul(half, S::Fma(e, z2_lo, e));
  const V r = Poly<S>(t, kErfcxR);
  // x >= 0: x - (x / 2) erfc in one fma; rounding 2 - erfc first gave 79 % of [0.5, 8) correctly
  // rounded (91 % now), and a DynamicQuantizeLinear behind the GELU takes its scale from the
  // largest result.
  const V pos = S::Fma(h, r, x);
  const V neg = S::Fma(h, r, S::Mul(x, S::Zero()));  // h r - 0, or NaN at -inf
  return S::Select(S::Less(x, S::Zero()), neg, pos);
}

// 0.5 x (1 + tanh(y)) = x sigmoid(2y), y = sqrt(2/pi) (x + 0.044715 x^3).
template <class S>
inline typename S::V GeluTanh(typename S::V x) {
  using V = typename S::V;
  const V x3 = S::Mul(S::Mul(x, x), x);
  const V y2 = S::Mul(S::Fma(x3, S::Set1(0.044715f), x), S::Set1(1.5957691216057308f));  // 2 sqrt(2/pi)
  return S::Mul(x, Sigmoid<S>(y2));
}

template <class S>
inline typename S::V Silu(typename S::V x) {
  return S::Mul(x, Sigmoid<S>(x));
}

// log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|)).
template <class S>
inline typename S::V Softplus(typename S::V x) {
  return S::Add(S::Max(S::Zero(), x), Log1pUnit<S>(Exp<S>(S::Neg(S::Abs(x)))));
}

// y[i] = F(x[i]): whole vectors, then one partial vector.
template <class S, typename S::V (*F)(typename S::V)>
void MapUnary(const float* x, float* y, size_t n) {
  constexpr size_t L = S::kLanes;
  size_t i = 0;
  for (; i + L <= n; i += L) S::Store(y + i, F(S::Load(x + i)));
  if (i < n) S::StoreN(y + i, F(S::LoadN(x + i, n - i)), n - i);
}

}  // namespace
}  // namespace onyx::linalg
