// f32 GEMM microkernel for AVX-512F: 14 rows x 32 columns (28 zmm accumulators, 2 for B, one
// broadcast of A). Compiled with AVX-512 flags; only reached when the CPU has AVX-512.
#if defined(__x86_64__)

#include "linalg/f32_simd_avx512.h"

namespace onyx::linalg {
namespace {

// The shared microkernel is written over the vector-math wrapper plus what a GEMM tile needs:
// partial loads and stores of any width up to a full vector, broadcasts from memory and 2^n.
struct GemmAvx512 : Avx512 {
  static V LoadN(const float* p, int n) { return n >= kLanes ? Load(p) : Avx512::LoadN(p, static_cast<size_t>(n)); }
  static void StoreN(float* p, V v, int n) {
    if (n >= kLanes)
      Store(p, v);
    else
      Avx512::StoreN(p, v, static_cast<size_t>(n));
  }
  static V Broadcast(const float* p) { return Set1(*p); }
  static V Pow2i(V n) {  // 2^n for integral n in [-126, 127]
    const __m512i e = _mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127));
    return _mm512_castsi512_ps(_mm512_slli_epi32(e, 23));
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
    "avx512", "f32_gemm_avx512_14x32", 14, 32, 512, &Tile<GemmAvx512, 14, 2>, &PackA<GemmAvx512, 14>, &PackB<GemmAvx512, 32>,
    /*cold_b_panel_outer=*/true,
};

}  // namespace onyx::linalg

#endif  // __x86_64__
