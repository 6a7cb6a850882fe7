// q8_pack_b.h's PackBGroupsOf4 for AVX2: 32 columns of 4 rows a step, interleaved into their
// 4-byte groups by two rounds of unpacks, and their column sums by vpmaddubsw / vpmaddwd.
#if defined(__x86_64__)
#include <immintrin.h>

#include "linalg/q8_pack_b.h"

namespace onyx::linalg {

int PackBGroupsOf4Avx2(const uint8_t* b, int64_t ldb, int64_t groups, int cols, uint8_t flip, uint8_t* out,
                       int64_t out_group_stride, uint32_t* sums) {
  const int whole = cols / 32 * 32;
  if (whole == 0) return 0;
  const __m256i flip_v = _mm256_set1_epi8(static_cast<char>(flip));
  const __m256i ones8 = _mm256_set1_epi8(1), ones16 = _mm256_set1_epi16(1);
  for (int c0 = 0; c0 < whole; c0 += 32) {
    // sum[j]: columns 8j .. 8j + 7 in the order the groups are stored.
    __m256i sum[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256()};
    const uint8_t* src = b + c0;
    uint8_t* dst = out + c0 * 4;
    for (int64_t q = 0; q < groups; ++q, src += 4 * ldb, dst += out_group_stride) {
      __m256i r[4];
      for (int i = 0; i < 4; ++i)
        r[i] = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i * ldb)), flip_v);
      // Per 128-bit lane (columns 0-15 | 16-31): bytes of rows 0,1 and rows 2,3 interleaved, then
      // their 16-bit pairs: g[j] holds columns 4j .. 4j + 3 | 16 + 4j .. 16 + 4j + 3, 4 rows each.
      const __m256i a = _mm256_unpacklo_epi8(r[0], r[1]), bh = _mm256_unpackhi_epi8(r[0], r[1]);
      const __m256i c = _mm256_unpacklo_epi8(r[2], r[3]), d = _mm256_unpackhi_epi8(r[2], r[3]);
      const __m256i g0 = _mm256_unpacklo_epi16(a, c), g1 = _mm256_unpackhi_epi16(a, c);
      const __m256i g2 = _mm256_unpacklo_epi16(bh, d), g3 = _mm256_unpackhi_epi16(bh, d);
      const __m256i o[4] = {_mm256_permute2x128_si256(g0, g1, 0x20), _mm256_permute2x128_si256(g2, g3, 0x20),
                            _mm256_permute2x128_si256(g0, g1, 0x31), _mm256_permute2x128_si256(g2, g3, 0x31)};
      for (int j = 0; j < 4; ++j) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 32 * j), o[j]);
        // 1 x each signed code, pairs to int16 (at most 2 x 128), then pairs to int32.
        sum[j] = _mm256_add_epi32(sum[j], _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, o[j]), ones16));
      }
    }
    for (int j = 0; j < 4; ++j) {
      alignas(32) int32_t s[8];
      _mm256_store_si256(reinterpret_cast<__m256i*>(s), sum[j]);
      for (int i = 0; i < 8; ++i) sums[c0 + 8 * j + i] += static_cast<uint32_t>(s[i]);
    }
  }
  return whole;
}

}  // namespace onyx::linalg
#endif  // __x86_64__
