// f32 GEMM microkernel for AVX2 + FMA: 6 rows x 16 columns (12 ymm accumulators, 2 for B, one
// broadcast of A). Compiled with -mavx2 -mfma; only reached when the CPU has both.
#if defined(__x86_64__)

#include <immintrin.h>

#include <cstdint>

namespace onyx::linalg {
namespace {

// Lane masks for partial loads and stores: 8 - n entries in, the first n lanes are set.
alignas(32) constexpr int32_t kMaskTable[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

// The SIMD wrapper the shared microkernel is written over (see f32_gemm_avx512_14x32.cc).
struct Avx2 {
  using V = __m256;
  using M = __m256;
  static constexpr int kLanes = 8;

  static __m256i Mask(int n) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kMaskTable + kLanes - n));
  }
  static V Zero() { return _mm256_setzero_ps(); }
  static V Set1(float x) { return _mm256_set1_ps(x); }
  static V Load(const float* p) { return _mm256_loadu_ps(p); }
  static V LoadN(const float* p, int n) { return n >= kLanes ? Load(p) : _mm256_maskload_ps(p, Mask(n)); }
  static void StoreN(float* p, V v, int n) {
    if (n >= kLanes)
      _mm256_storeu_ps(p, v);
    else
      _mm256_maskstore_ps(p, Mask(n), v);
  }
  static V Broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  static V Add(V a, V b) { return _mm256_add_ps(a, b); }
  static V Sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V Mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V Div(V a, V b) { return _mm256_div_ps(a, b); }
  static V Fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V Fnma(V a, V b, V c) { return _mm256_fnmadd_ps(a, b, c); }
  static V SquareLo(V x, V hi) { return _mm256_fmsub_ps(x, x, hi); }
  static V Max(V a, V b) { return _mm256_max_ps(a, b); }  // NaN in b propagates
  static V Min(V a, V b) { return _mm256_min_ps(a, b); }
  static V Abs(V a) { return _mm256_and_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff))); }
  static V Round(V a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static V Pow2i(V n) {
    const __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
    return _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
  }
  static M Less(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
  static V Select(M m, V yes, V no) { return _mm256_blendv_ps(no, yes, m); }

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

#include "linalg/f32_gemm_tile_impl.h"

namespace onyx::linalg {

constexpr F32GemmKernel kF32GemmAvx2_6x16 = {
    "avx2", "f32_gemm_avx2_6x16", 6, 16, 512, &Tile<Avx2, 6, 2>, &PackA<Avx2, 6>, &PackB<Avx2, 16>,
};

}  // namespace onyx::linalg

#endif  // __x86_64__
