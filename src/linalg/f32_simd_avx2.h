// The AVX2 + FMA SIMD wrapper that the vector-math templates (f32_vmath_impl.h and the family
// impl headers) are written over; same interface as f32_simd_avx512.h. Include only from
// *_avx2.cc files: everything here has internal linkage.
#pragma once

#if defined(__x86_64__)

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

namespace onyx::linalg {
namespace {

// Lane masks for partial loads and stores: 8 - n entries in, the first n lanes are set.
alignas(32) constexpr int32_t kAvx2MaskTable[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

struct Avx2 {
  using V = __m256;
  using M = __m256;   // all-ones lanes are true
  using D = __m256d;  // double accumulators: half a V each
  static constexpr int kLanes = 8;
  static constexpr const char* kIsa = "avx2";

  static __m256i TailMask(size_t n) {  // n < kLanes
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kAvx2MaskTable + kLanes - n));
  }
  static V Zero() { return _mm256_setzero_ps(); }
  static V Set1(float x) { return _mm256_set1_ps(x); }
  static V Load(const float* p) { return _mm256_loadu_ps(p); }
  static void Store(float* p, V v) { _mm256_storeu_ps(p, v); }
  // Partial vectors (n < kLanes): lanes past n read as `fill` and are never touched in memory.
  static V LoadN(const float* p, size_t n) { return _mm256_maskload_ps(p, TailMask(n)); }
  static V LoadN(const float* p, size_t n, float fill) {
    const __m256i m = TailMask(n);
    return _mm256_blendv_ps(Set1(fill), _mm256_maskload_ps(p, m), _mm256_castsi256_ps(m));
  }
  static void StoreN(float* p, V v, size_t n) { _mm256_maskstore_ps(p, TailMask(n), v); }

  static V Add(V a, V b) { return _mm256_add_ps(a, b); }
  static V Sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V Mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V Div(V a, V b) { return _mm256_div_ps(a, b); }
  // 1 / a for normal a: the 12-bit estimate and two Newton steps (one leaves 2-3 ulps, which
  // GeluErf's erfc amplifies past its bound); within about 1 ulp, and cheaper than Div.
  static V Reciprocal(V a) {
    V r = _mm256_rcp_ps(a);
    r = Fma(Fnma(a, r, Set1(1.0f)), r, r);
    return Fma(Fnma(a, r, Set1(1.0f)), r, r);
  }
  static V Fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }    // a * b + c
  static V Fnma(V a, V b, V c) { return _mm256_fnmadd_ps(a, b, c); }  // c - a * b
  static V Fms(V a, V b, V c) { return _mm256_fmsub_ps(a, b, c); }    // a * b - c
  static V Max(V a, V b) { return _mm256_max_ps(a, b); }              // b when either is NaN
  static V Min(V a, V b) { return _mm256_min_ps(a, b); }              // b when either is NaN
  static V SignBit() { return _mm256_castsi256_ps(_mm256_set1_epi32(INT32_MIN)); }
  static V Abs(V a) { return _mm256_andnot_ps(SignBit(), a); }
  static V Neg(V a) { return _mm256_xor_ps(a, SignBit()); }
  // |mag| with the sign of `sign` (mag must be non-negative).
  static V WithSignOf(V mag, V sign) { return _mm256_or_ps(mag, _mm256_and_ps(sign, SignBit())); }
  static V Round(V a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static V Sqrt(V a) { return _mm256_sqrt_ps(a); }

  static M Less(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
  static M Equal(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
  static M IsNan(V a) { return _mm256_cmp_ps(a, a, _CMP_UNORD_Q); }
  static M Or(M a, M b) { return _mm256_or_ps(a, b); }
  static M And(M a, M b) { return _mm256_and_ps(a, b); }
  static bool Any(M m) { return _mm256_movemask_ps(m) != 0; }
  static V Select(M m, V yes, V no) { return _mm256_blendv_ps(no, yes, m); }

  // p * 2^n for integral n in [-151, 129]: two factors 2^(n - n/2) and 2^(n/2) that are both
  // normal floats, so the one rounding (to inf or to a denormal) happens in the last multiply.
  static V Scale2(V p, V n) {
    const __m256i ni = _mm256_cvtps_epi32(n);
    const __m256i n1 = _mm256_srai_epi32(ni, 1);
    const __m256i n2 = _mm256_sub_epi32(ni, n1);
    const __m256i bias = _mm256_set1_epi32(127);
    const V s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
    const V s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
    return Mul(Mul(p, s1), s2);
  }
  // x = m * 2^e with m in [sqrt(1/2), sqrt(2)) for positive finite x, denormals included.
  static void SplitExponent(V x, V& m, V& e) {
    const M tiny = Less(x, Set1(1.17549435e-38f));  // denormal: scale into the normal range first
    x = Select(tiny, Mul(x, Set1(8388608.0f)), x);  // 2^23
    const __m256i bits = _mm256_castps_si256(x);
    const __m256i exponent = _mm256_sub_epi32(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(127));
    e = Sub(_mm256_cvtepi32_ps(exponent), _mm256_and_ps(tiny, Set1(23.0f)));
    m = _mm256_castsi256_ps(
        _mm256_or_si256(_mm256_and_si256(bits, _mm256_set1_epi32(0x007fffff)), _mm256_set1_epi32(0x3f800000)));
    const M big = _mm256_cmp_ps(m, Set1(1.41421356f), _CMP_GT_OQ);
    m = Select(big, Mul(m, Set1(0.5f)), m);
    e = Add(e, _mm256_and_ps(big, Set1(1.0f)));
  }

  static float ReduceAdd(V v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  static float ReduceMax(V v) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  static float ReduceMin(V v) {
    __m128 s = _mm_min_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_min_ps(s, _mm_movehl_ps(s, s));
    s = _mm_min_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }

  // Double accumulation.
  static D ZeroD() { return _mm256_setzero_pd(); }
  static D AddD(D a, D b) { return _mm256_add_pd(a, b); }
  static D FmaD(D a, D b, D c) { return _mm256_fmadd_pd(a, b, c); }
  static D LoadD(const double* p) { return _mm256_loadu_pd(p); }
  // kLanes / 2 floats widened to doubles (n < kLanes / 2 for the partial form: the rest are 0).
  static D LoadWide(const float* p) { return _mm256_cvtps_pd(_mm_loadu_ps(p)); }
  static D LoadWideN(const float* p, size_t n) {
    const __m128i mask = _mm_loadu_si128(reinterpret_cast<const __m128i*>(kAvx2MaskTable + 8 - n));
    return _mm256_cvtps_pd(_mm_maskload_ps(p, mask));
  }
  static D AbsD(D v) { return _mm256_andnot_pd(_mm256_set1_pd(-0.0), v); }
  static void StoreD(double* p, D v) { _mm256_storeu_pd(p, v); }
  static double ReduceAddD(D v) {
    __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    s = _mm_add_sd(s, _mm_unpackhi_pd(s, s));
    return _mm_cvtsd_f64(s);
  }

  // 8 x 8 transpose: pairs and quads within 128-bit lanes, then the two lanes.
  static void Transpose(V r[8]) {
    V t[8], u[8];
    for (int i = 0; i < 4; ++i) {
      t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
      t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int g = 0; g < 2; ++g) {
      const __m256d t0 = _mm256_castps_pd(t[4 * g]), t1 = _mm256_castps_pd(t[4 * g + 1]);
      const __m256d t2 = _mm256_castps_pd(t[4 * g + 2]), t3 = _mm256_castps_pd(t[4 * g + 3]);
      u[4 * g] = _mm256_castpd_ps(_mm256_unpacklo_pd(t0, t2));
      u[4 * g + 1] = _mm256_castpd_ps(_mm256_unpackhi_pd(t0, t2));
      u[4 * g + 2] = _mm256_castpd_ps(_mm256_unpacklo_pd(t1, t3));
      u[4 * g + 3] = _mm256_castpd_ps(_mm256_unpackhi_pd(t1, t3));
    }
    for (int c = 0; c < 4; ++c) {
      r[c] = _mm256_permute2f128_ps(u[c], u[4 + c], 0x20);
      r[4 + c] = _mm256_permute2f128_ps(u[c], u[4 + c], 0x31);
    }
  }
};

}  // namespace
}  // namespace onyx::linalg

#endif  // __x86_64__
