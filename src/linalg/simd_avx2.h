// An 8-float AVX2+FMA vector for the convolution microkernels. Include only from *_avx2.cc files
// (compiled with -mavx2 -mfma); see simd_avx512.h.
#pragma once

#include <immintrin.h>

#include <cstdint>

#define ONYX_SIMD_NS avx2

namespace onyx::linalg::avx2 {

struct Vec {
  static constexpr int kWidth = 8;
  __m256 v;

  static Vec Zero() { return {_mm256_setzero_ps()}; }
  static Vec Set1(float x) { return {_mm256_set1_ps(x)}; }
  static Vec Load(const float* p) { return {_mm256_loadu_ps(p)}; }
  static Vec LoadPartial(const float* p, int64_t n) { return {_mm256_maskload_ps(p, Mask(n))}; }
  using LaneMask = __m256i;
  static LaneMask RangeMask(int64_t lo, int64_t hi) { return _mm256_andnot_si256(Mask(lo), Mask(hi)); }
  static Vec LoadMasked(const float* p, LaneMask m) { return {_mm256_maskload_ps(p, m)}; }
  static void Store(float* p, Vec a) { _mm256_storeu_ps(p, a.v); }
  static void StorePartial(float* p, Vec a, int64_t n) { _mm256_maskstore_ps(p, Mask(n), a.v); }
  static Vec Fma(Vec a, Vec b, Vec c) { return {_mm256_fmadd_ps(a.v, b.v, c.v)}; }  // a * b + c
  static Vec Add(Vec a, Vec b) { return {_mm256_add_ps(a.v, b.v)}; }
  static Vec Sub(Vec a, Vec b) { return {_mm256_sub_ps(a.v, b.v)}; }
  static Vec Mul(Vec a, Vec b) { return {_mm256_mul_ps(a.v, b.v)}; }
  static Vec Max(Vec a, Vec b) { return {_mm256_max_ps(a.v, b.v)}; }
  static Vec Min(Vec a, Vec b) { return {_mm256_min_ps(a.v, b.v)}; }
  // 1 / a to about 2 ulp for positive normal a below 2^126: the 12-bit estimate and one Newton
  // step, a fraction of the divide's cost.
  static Vec Reciprocal(Vec a) {
    const __m256 r = _mm256_rcp_ps(a.v);
    return {_mm256_fmadd_ps(r, _mm256_fnmadd_ps(a.v, r, _mm256_set1_ps(1.0f)), r)};
  }
  static Vec Round(Vec a) { return {_mm256_round_ps(a.v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)}; }
  // p * 2^n for integral n in [-126, 127]: 2^n built in the exponent bits.
  static Vec Scale2(Vec p, Vec n) {
    const __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(n.v), _mm256_set1_epi32(127));
    return {_mm256_mul_ps(p.v, _mm256_castsi256_ps(_mm256_slli_epi32(e, 23)))};
  }

  static Vec LoadEven(const float* p) { return Even(_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)); }
  static Vec LoadEvenMasked(const float* p, LaneMask m0, LaneMask m1) {
    return Even(_mm256_maskload_ps(p, m0), _mm256_maskload_ps(p + 8, m1));
  }

  static void Deinterleave2(const float* p, Vec& even, Vec& odd) {
    const __m256 a = _mm256_loadu_ps(p), b = _mm256_loadu_ps(p + 8);
    // Within 128-bit lanes: a0 a2 b0 b2 | a4 a6 b4 b6, then fix the 64-bit order.
    const __m256 e = _mm256_shuffle_ps(a, b, 0x88), o = _mm256_shuffle_ps(a, b, 0xDD);
    even.v = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xD8));
    odd.v = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(o), 0xD8));
  }

  // In-place transpose of an 8x8 block held as 8 row vectors.
  static void Transpose(Vec* r) {
    __m256 t[8], u[8];
    for (int i = 0; i < 4; ++i) {
      t[2 * i] = _mm256_unpacklo_ps(r[2 * i].v, r[2 * i + 1].v);
      t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i].v, r[2 * i + 1].v);
    }
    for (int k = 0; k < 2; ++k) {
      u[4 * k + 0] = _mm256_shuffle_ps(t[4 * k], t[4 * k + 2], 0x44);
      u[4 * k + 1] = _mm256_shuffle_ps(t[4 * k], t[4 * k + 2], 0xEE);
      u[4 * k + 2] = _mm256_shuffle_ps(t[4 * k + 1], t[4 * k + 3], 0x44);
      u[4 * k + 3] = _mm256_shuffle_ps(t[4 * k + 1], t[4 * k + 3], 0xEE);
    }
    for (int j = 0; j < 4; ++j) {
      r[j].v = _mm256_permute2f128_ps(u[j], u[4 + j], 0x20);
      r[4 + j].v = _mm256_permute2f128_ps(u[j], u[4 + j], 0x31);
    }
  }

 private:
  static Vec Even(__m256 a, __m256 b) {
    const __m256 e = _mm256_shuffle_ps(a, b, 0x88);  // a0 a2 b0 b2 | a4 a6 b4 b6
    return {_mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xD8))};
  }
  static __m256i Mask(int64_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
};

}  // namespace onyx::linalg::avx2
