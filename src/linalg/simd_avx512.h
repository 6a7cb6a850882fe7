// A 16-float AVX-512 vector for the convolution microkernels. Include only from *_avx512.cc
// files (compiled with AVX-512 flags); the kernels written against `Vec` live in the namespace
// named by ONYX_SIMD_NS so each ISA's copy is a distinct symbol.
#pragma once

#include <immintrin.h>

#include <cstdint>

#define ONYX_SIMD_NS avx512

// GCC 12 reports the deliberately undefined pass-through operand of the masked AVX-512
// builtins (max, min, roundscale, cvtps, slli) as maybe uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace onyx::linalg::avx512 {

struct Vec {
  static constexpr int kWidth = 16;
  __m512 v;

  static Vec Zero() { return {_mm512_setzero_ps()}; }
  static Vec Set1(float x) { return {_mm512_set1_ps(x)}; }
  static Vec Load(const float* p) { return {_mm512_loadu_ps(p)}; }
  static Vec LoadPartial(const float* p, int64_t n) { return {_mm512_maskz_loadu_ps(Mask(n), p)}; }
  // Lanes [lo, hi) from p[lane], the others zero (masked lanes are not read).
  using LaneMask = __mmask16;
  static LaneMask RangeMask(int64_t lo, int64_t hi) { return static_cast<__mmask16>(Mask(hi) & ~Mask(lo)); }
  static Vec LoadMasked(const float* p, LaneMask m) { return {_mm512_maskz_loadu_ps(m, p)}; }
  static void Store(float* p, Vec a) { _mm512_storeu_ps(p, a.v); }
  static void StorePartial(float* p, Vec a, int64_t n) { _mm512_mask_storeu_ps(p, Mask(n), a.v); }
  static Vec Fma(Vec a, Vec b, Vec c) { return {_mm512_fmadd_ps(a.v, b.v, c.v)}; }  // a * b + c
  static Vec Add(Vec a, Vec b) { return {_mm512_add_ps(a.v, b.v)}; }
  static Vec Sub(Vec a, Vec b) { return {_mm512_sub_ps(a.v, b.v)}; }
  static Vec Mul(Vec a, Vec b) { return {_mm512_mul_ps(a.v, b.v)}; }
  static Vec Max(Vec a, Vec b) { return {_mm512_max_ps(a.v, b.v)}; }
  static Vec Min(Vec a, Vec b) { return {_mm512_min_ps(a.v, b.v)}; }
  // 1 / a to about 1 ulp for positive normal a: the 14-bit estimate and one Newton step, a
  // fraction of the divide's cost.
  static Vec Reciprocal(Vec a) {
    const __m512 r = _mm512_rcp14_ps(a.v);
    return {_mm512_fmadd_ps(r, _mm512_fnmadd_ps(a.v, r, _mm512_set1_ps(1.0f)), r)};
  }
  static Vec Round(Vec a) { return {_mm512_roundscale_ps(a.v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)}; }
  // p * 2^n for integral n in [-126, 127], in one instruction.
  static Vec Scale2(Vec p, Vec n) { return {_mm512_scalef_ps(p.v, n.v)}; }

  // The even lanes of 2 * kWidth floats: p[0], p[2], ... (masked: m0 / m1 for each half).
  static Vec LoadEven(const float* p) {
    return {_mm512_permutex2var_ps(_mm512_loadu_ps(p), EvenIndex(), _mm512_loadu_ps(p + 16))};
  }
  static Vec LoadEvenMasked(const float* p, LaneMask m0, LaneMask m1) {
    return {_mm512_permutex2var_ps(_mm512_maskz_loadu_ps(m0, p), EvenIndex(), _mm512_maskz_loadu_ps(m1, p + 16))};
  }

  // even[i] = p[2i], odd[i] = p[2i + 1] for 2 * kWidth floats.
  static void Deinterleave2(const float* p, Vec& even, Vec& odd) {
    const __m512 a = _mm512_loadu_ps(p), b = _mm512_loadu_ps(p + 16);
    const __m512i ie = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i io = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    even.v = _mm512_permutex2var_ps(a, ie, b);
    odd.v = _mm512_permutex2var_ps(a, io, b);
  }

  // In-place transpose of a 16x16 block held as 16 row vectors.
  static void Transpose(Vec* r) {
    __m512 t[16], u[16];
    for (int i = 0; i < 8; ++i) {
      t[2 * i] = _mm512_unpacklo_ps(r[2 * i].v, r[2 * i + 1].v);
      t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i].v, r[2 * i + 1].v);
    }
    for (int k = 0; k < 4; ++k) {
      u[4 * k + 0] = _mm512_shuffle_ps(t[4 * k], t[4 * k + 2], 0x44);
      u[4 * k + 1] = _mm512_shuffle_ps(t[4 * k], t[4 * k + 2], 0xEE);
      u[4 * k + 2] = _mm512_shuffle_ps(t[4 * k + 1], t[4 * k + 3], 0x44);
      u[4 * k + 3] = _mm512_shuffle_ps(t[4 * k + 1], t[4 * k + 3], 0xEE);
    }
    // u[4k + j] holds, in 128-bit lane L, column 4L + j of rows 4k..4k+3.
    for (int j = 0; j < 4; ++j) {
      const __m512 x0 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0x88);
      const __m512 x1 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0xDD);
      const __m512 x2 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0x88);
      const __m512 x3 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0xDD);
      r[j].v = _mm512_shuffle_f32x4(x0, x2, 0x88);
      r[8 + j].v = _mm512_shuffle_f32x4(x0, x2, 0xDD);
      r[4 + j].v = _mm512_shuffle_f32x4(x1, x3, 0x88);
      r[12 + j].v = _mm512_shuffle_f32x4(x1, x3, 0xDD);
    }
  }

 private:
  static __m512i EvenIndex() { return _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30); }
  static __mmask16 Mask(int64_t n) { return static_cast<__mmask16>((1u << (n < 0 ? 0 : n)) - 1u); }
};

}  // namespace onyx::linalg::avx512
