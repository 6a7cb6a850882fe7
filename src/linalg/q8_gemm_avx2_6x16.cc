// The AVX2 int8 GEMM tile on 16-bit codes: vpmaddwd multiplies pairs of int16 and adds them
// into int32 exactly. (vpmaddubsw on the bytes would be twice as fast but saturates its int16
// pair sums, 255 * 127 * 2 > 32767, which would make results differ from the exact int32 ones.)
#if defined(__x86_64__)

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "linalg/q8_gemm_kernel.h"
#include "linalg/q8_gemm_output_impl.h"

namespace onyx::linalg {
namespace {

constexpr int kMr = 6, kNr = 16, kGroup = 2;

void Tile(int64_t k_groups, const void* a_panel, const void* b_panel, int32_t* acc) {
  const auto* a = static_cast<const int16_t*>(a_panel);
  const auto* b = static_cast<const int16_t*>(b_panel);
  __m256i c[kMr][2];
#pragma GCC unroll 6
  for (int r = 0; r < kMr; ++r) c[r][0] = c[r][1] = _mm256_setzero_si256();
  for (int64_t g = 0; g < k_groups; ++g, a += kMr * kGroup, b += kNr * kGroup) {
    const __m256i b0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(b));
    const __m256i b1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(b + 16));
#pragma GCC unroll 6
    for (int r = 0; r < kMr; ++r) {
      int32_t pair;
      std::memcpy(&pair, a + r * kGroup, sizeof(pair));
      const __m256i av = _mm256_set1_epi32(pair);
      c[r][0] = _mm256_add_epi32(c[r][0], _mm256_madd_epi16(av, b0));
      c[r][1] = _mm256_add_epi32(c[r][1], _mm256_madd_epi16(av, b1));
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < kMr; ++r) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + r * kNr), c[r][0]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + r * kNr + 8), c[r][1]);
  }
}

}  // namespace

const Q8GemmKernel kQ8GemmAvx2_6x16 = {"avx2", "q8_gemm_avx2_6x16", kMr, kNr, kGroup, 2, 2, &Tile,
                                       &FinishTile<kMr, kNr, true>};

}  // namespace onyx::linalg
#endif  // __x86_64__
