// f32 GEMM microkernel for AVX2 + FMA: 6 rows x 16 columns (12 ymm accumulators, 2 for B, one
// broadcast of A). Compiled with -mavx2 -mfma; only reached when the CPU has both.
#if defined(__x86_64__)

#include "linalg/f32_simd_avx2.h"

namespace onyx::linalg {
namespace {

// The vector-math wrapper plus what the GEMM tile needs (see f32_gemm_avx512_14x32.cc).
struct GemmAvx2 : Avx2 {
  static V LoadN(const float* p, int n) { return n >= kLanes ? Load(p) : Avx2::LoadN(p, static_cast<size_t>(n)); }
  static void StoreN(float* p, V v, int n) {
    if (n >= kLanes)
      Store(p, v);
    else
      Avx2::StoreN(p, v, static_cast<size_t>(n));
  }
  static V Broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  static V Pow2i(V n) {  // 2^n for integral n in [-126, 127]
    const __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
    return _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
  }
};

}  // namespace
}  // namespace onyx::linalg

#include "linalg/f32_gemm_tile_impl.h"

namespace onyx::linalg {

constexpr F32GemmKernel kF32GemmAvx2_6x16 = {
    "avx2", "f32_gemm_avx2_6x16", 6, 16, 512, &Tile<GemmAvx2, 6, 2>, &PackA<GemmAvx2, 6>, &PackB<GemmAvx2, 16>,
    /*cold_b_panel_outer=*/false,
};

}  // namespace onyx::linalg

#endif  // __x86_64__
