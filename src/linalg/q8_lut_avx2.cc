// Q8Lookup on AVX2 (q8_lut.h): the table as 16 rows of 16 entries; each row is looked up by
// the low nibble (vpshufb) and kept where the high nibble selects it.
#if defined(__x86_64__)

#include <immintrin.h>

#include "linalg/q8_lut.h"

namespace onyx::linalg {

void Q8LookupAvx2(const uint8_t* table, const uint8_t* x, int64_t n, uint8_t* y) {
  __m256i rows[16];
  for (int t = 0; t < 16; ++t)
    rows[t] = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(table + 16 * t)));
  const __m256i nibble = _mm256_set1_epi8(0x0F);
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i));
    const __m256i lo = _mm256_and_si256(v, nibble);
    const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble);
    __m256i out = _mm256_setzero_si256();
    for (int t = 0; t < 16; ++t) {
      const __m256i pick = _mm256_cmpeq_epi8(hi, _mm256_set1_epi8(static_cast<char>(t)));
      out = _mm256_or_si256(out, _mm256_and_si256(pick, _mm256_shuffle_epi8(rows[t], lo)));
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), out);
  }
  for (; i < n; ++i) y[i] = table[x[i]];
}

}  // namespace onyx::linalg
#endif  // __x86_64__
