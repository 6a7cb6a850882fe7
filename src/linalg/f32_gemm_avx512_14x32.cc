// f32 GEMM microkernel for AVX-512F: 14 rows x 32 columns (28 zmm accumulators, 2 for B, one
// broadcast of A). Compiled with AVX-512 flags; only reached when the CPU has AVX-512.
#if defined(__x86_64__)

// GCC 12 reports its own AVX-512 headers' undefined-vector idiom (set1, masked loads) as maybe
// uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <immintrin.h>

#include <cstdint>

// The SIMD wrapper the shared microkernel is written over (same interface in every ISA file).
namespace onyx::linalg {
namespace {

struct Avx512 {
  using V = __m512;
  using M = __mmask16;
  static constexpr int kLanes = 16;

  static M Mask(int n) { return static_cast<M>((1u << n) - 1u); }
  static V Zero() { return _mm512_setzero_ps(); }
  static V Set1(float x) { return _mm512_set1_ps(x); }
  static V Load(const float* p) { return _mm512_loadu_ps(p); }
  static V LoadN(const float* p, int n) { return n >= kLanes ? Load(p) : _mm512_maskz_loadu_ps(Mask(n), p); }
  static void StoreN(float* p, V v, int n) {
    if (n >= kLanes)
      _mm512_storeu_ps(p, v);
    else
      _mm512_mask_storeu_ps(p, Mask(n), v);
  }
  static V Broadcast(const float* p) { return _mm512_set1_ps(*p); }
  static V Add(V a, V b) { return _mm512_add_ps(a, b); }
  static V Sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V Mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V Div(V a, V b) { return _mm512_div_ps(a, b); }
  static V Fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }    // a * b + c
  static V Fnma(V a, V b, V c) { return _mm512_fnmadd_ps(a, b, c); }  // c - a * b
  static V SquareLo(V x, V hi) { return _mm512_fmsub_ps(x, x, hi); }  // x * x - hi, exactly
  static V Max(V a, V b) { return _mm512_max_ps(a, b); }  // NaN in b propagates
  static V Min(V a, V b) { return _mm512_min_ps(a, b); }
  static V Abs(V a) { return _mm512_abs_ps(a); }
  static V Round(V a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static V Pow2i(V n) {  // 2^n for integral n in [-126, 127]
    const __m512i e = _mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127));
    return _mm512_castsi512_ps(_mm512_slli_epi32(e, 23));
  }
  static M Less(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  static V Select(M m, V yes, V no) { return _mm512_mask_blend_ps(m, no, yes); }

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
    // u[4g + c], 128-bit lane l: rows 4g..4g+3 of column 4l + c.
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

#include "linalg/f32_gemm_tile_impl.h"

namespace onyx::linalg {

// kc 512: the A panel (14 x 512 floats, 28 KB) stays in L1 while B streams past it; 1024 (56 KB)
// did not fit, and measured 2-3% slower on unpacked squares from 1024 to 2048 (equal with
// pre-packed B).
constexpr F32GemmKernel kF32GemmAvx512_14x32 = {
    "avx512", "f32_gemm_avx512_14x32", 14, 32, 512, &Tile<Avx512, 14, 2>, &PackA<Avx512, 14>, &PackB<Avx512, 32>,
};

}  // namespace onyx::linalg

#endif  // __x86_64__
