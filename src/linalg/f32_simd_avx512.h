// The AVX-512 SIMD wrapper that the vector-math templates (f32_vmath_impl.h and the family
// impl headers) are written over. Include only from *_avx512.cc files: everything here has
// internal linkage so that no AVX-512 code is merged with a baseline copy by the linker.
#pragma once

#if defined(__x86_64__)

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

// GCC 12 reports its own AVX-512 headers' undefined-vector idiom as (maybe) uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace onyx::linalg {
namespace {

struct Avx512 {
  using V = __m512;
  using M = __mmask16;
  using D = __m512d;  // double accumulators: half a V each
  static constexpr int kLanes = 16;
  static constexpr const char* kIsa = "avx512";

  static M TailMask(size_t n) { return static_cast<M>((1u << n) - 1u); }  // n < kLanes
  static V Zero() { return _mm512_setzero_ps(); }
  static V Set1(float x) { return _mm512_set1_ps(x); }
  static V Load(const float* p) { return _mm512_loadu_ps(p); }
  static void Store(float* p, V v) { _mm512_storeu_ps(p, v); }
  // Partial vectors (n < kLanes): lanes past n read as `fill` and are never touched in memory.
  static V LoadN(const float* p, size_t n) { return _mm512_maskz_loadu_ps(TailMask(n), p); }
  static V LoadN(const float* p, size_t n, float fill) { return _mm512_mask_loadu_ps(Set1(fill), TailMask(n), p); }
  static void StoreN(float* p, V v, size_t n) { _mm512_mask_storeu_ps(p, TailMask(n), v); }

  static V Add(V a, V b) { return _mm512_add_ps(a, b); }
  static V Sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V Mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V Div(V a, V b) { return _mm512_div_ps(a, b); }
  // 1 / a for normal a: the 14-bit estimate and one Newton step (cheaper than Div, whose
  // throughput bounds the erfc tail of GeluErf); about 1 ulp off.
  static V Reciprocal(V a) {
    const V r = _mm512_rcp14_ps(a);
    return Fma(Fnma(a, r, Set1(1.0f)), r, r);
  }
  static V Fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }    // a * b + c
  static V Fnma(V a, V b, V c) { return _mm512_fnmadd_ps(a, b, c); }  // c - a * b
  static V Fms(V a, V b, V c) { return _mm512_fmsub_ps(a, b, c); }    // a * b - c
  static V Max(V a, V b) { return _mm512_max_ps(a, b); }              // b when either is NaN
  static V Min(V a, V b) { return _mm512_min_ps(a, b); }              // b when either is NaN
  static V Abs(V a) { return _mm512_abs_ps(a); }
  static V Neg(V a) {
    return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), _mm512_set1_epi32(INT32_MIN)));
  }
  // |mag| with the sign of `sign` (mag must be non-negative).
  static V WithSignOf(V mag, V sign) {
    return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(_mm512_castps_si512(mag), _mm512_castps_si512(sign),
                                                         _mm512_set1_epi32(INT32_MIN), 0xF8));  // a | (b & c)
  }
  static V Round(V a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static V Sqrt(V a) { return _mm512_sqrt_ps(a); }

  static M Less(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  static M Equal(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ); }
  static M IsNan(V a) { return _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q); }
  static M Or(M a, M b) { return static_cast<M>(a | b); }
  static M And(M a, M b) { return static_cast<M>(a & b); }
  static bool Any(M m) { return m != 0; }
  static V Select(M m, V yes, V no) { return _mm512_mask_blend_ps(m, no, yes); }

  // p * 2^n for integral n in [-151, 129], with IEEE overflow to inf and gradual underflow.
  static V Scale2(V p, V n) { return _mm512_scalef_ps(p, n); }
  // x = m * 2^e with m in [sqrt(1/2), sqrt(2)) for positive finite x, denormals included.
  static void SplitExponent(V x, V& m, V& e) {
    m = _mm512_getmant_ps(x, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_src);
    e = _mm512_getexp_ps(x);
    const M big = _mm512_cmp_ps_mask(m, Set1(1.41421356f), _CMP_GT_OQ);
    m = _mm512_mask_mul_ps(m, big, m, Set1(0.5f));
    e = _mm512_mask_add_ps(e, big, e, Set1(1.0f));
  }

  static float ReduceAdd(V v) { return _mm512_reduce_add_ps(v); }
  static float ReduceMax(V v) { return _mm512_reduce_max_ps(v); }
  static float ReduceMin(V v) { return _mm512_reduce_min_ps(v); }

  // Double accumulation.
  static D ZeroD() { return _mm512_setzero_pd(); }
  static D AddD(D a, D b) { return _mm512_add_pd(a, b); }
  static D FmaD(D a, D b, D c) { return _mm512_fmadd_pd(a, b, c); }
  static D LoadD(const double* p) { return _mm512_loadu_pd(p); }
  // kLanes / 2 floats widened to doubles (n < kLanes / 2 for the partial form: the rest are 0).
  static D LoadWide(const float* p) { return _mm512_cvtps_pd(_mm256_loadu_ps(p)); }
  static D LoadWideN(const float* p, size_t n) {
    return _mm512_cvtps_pd(_mm256_maskz_loadu_ps(static_cast<__mmask8>((1u << n) - 1u), p));
  }
  static D AbsD(D v) { return _mm512_abs_pd(v); }
  static void StoreD(double* p, D v) { _mm512_storeu_pd(p, v); }
  static double ReduceAddD(D v) { return _mm512_reduce_add_pd(v); }

  // 16 x 16 transpose: pairs within 128-bit lanes, then quads, then the lanes themselves.
  static void Transpose(V r[16]) {
    V t[16], u[16];
    for (int i = 0; i < 8; ++i) {
      t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
      t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int g = 0; g < 4; ++g) {
      const __m512d t0 = _mm512_castps_pd(t[4 * g]), t1 = _mm512_castps_pd(t[4 * g + 1]);
      const __m512d t2 = _mm512_castps_pd(t[4 * g + 2]), t3 = _mm512_castps_pd(t[4 * g + 3]);
      u[4 * g] = _mm512_castpd_ps(_mm512_unpacklo_pd(t0, t2));
      u[4 * g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(t0, t2));
      u[4 * g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(t1, t3));
      u[4 * g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(t1, t3));
    }
    // u[4g + c], 128-bit lane l, holds rows 4g..4g+3 of column 4l + c.
    for (int c = 0; c < 4; ++c) {
      const V v1 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0x44), v2 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0xEE);
      const V w1 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0x44);
      const V w2 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0xEE);
      r[c] = _mm512_shuffle_f32x4(v1, w1, 0x88);
      r[4 + c] = _mm512_shuffle_f32x4(v1, w1, 0xDD);
      r[8 + c] = _mm512_shuffle_f32x4(v2, w2, 0x88);
      r[12 + c] = _mm512_shuffle_f32x4(v2, w2, 0xDD);
    }
  }
};

}  // namespace
}  // namespace onyx::linalg

#endif  // __x86_64__
