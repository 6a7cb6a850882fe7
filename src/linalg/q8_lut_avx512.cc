// Q8Lookup on AVX-512 (q8_lut.h). BW: the table as 16 rows of 16 entries, each looked up by the
// low nibble (vpshufb) and merged where the high nibble selects it. VBMI (by function target, as
// the build's AVX-512 flags leave it out): vpermi2b looks up 64 codes in 128 entries at once, so
// two lookups and a blend on the top bit cover the table.
#if defined(__x86_64__)

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12 reports its own AVX-512 headers' undefined-vector idiom as (maybe) uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include <immintrin.h>

#include "linalg/q8_lut.h"

namespace onyx::linalg {

void Q8LookupAvx512(const uint8_t* table, const uint8_t* x, int64_t n, uint8_t* y) {
  __m512i rows[16];
  for (int t = 0; t < 16; ++t)
    rows[t] = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(table + 16 * t)));
  const __m512i nibble = _mm512_set1_epi8(0x0F);
  for (int64_t i = 0; i < n; i += 64) {
    const __mmask64 live = n - i >= 64 ? ~__mmask64{0} : (__mmask64{1} << (n - i)) - 1;
    const __m512i v = _mm512_maskz_loadu_epi8(live, x + i);
    const __m512i lo = _mm512_and_si512(v, nibble);
    const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), nibble);
    __m512i out = _mm512_setzero_si512();
    for (int t = 0; t < 16; ++t)
      out = _mm512_mask_shuffle_epi8(out, _mm512_cmpeq_epi8_mask(hi, _mm512_set1_epi8(static_cast<char>(t))), rows[t], lo);
    _mm512_mask_storeu_epi8(y + i, live, out);
  }
}

__attribute__((target("avx512f,avx512bw,avx512vbmi"))) void Q8LookupAvx512Vbmi(const uint8_t* table, const uint8_t* x,
                                                                                int64_t n, uint8_t* y) {
  const __m512i t0 = _mm512_loadu_si512(table), t1 = _mm512_loadu_si512(table + 64);
  const __m512i t2 = _mm512_loadu_si512(table + 128), t3 = _mm512_loadu_si512(table + 192);
  for (int64_t i = 0; i < n; i += 64) {
    const __mmask64 live = n - i >= 64 ? ~__mmask64{0} : (__mmask64{1} << (n - i)) - 1;
    const __m512i v = _mm512_maskz_loadu_epi8(live, x + i);
    // vpermi2b reads the low 7 bits of each index: entries 0-127 from t0:t1, 128-255 from t2:t3.
    const __m512i low = _mm512_permutex2var_epi8(t0, v, t1);
    const __m512i high = _mm512_permutex2var_epi8(t2, v, t3);
    _mm512_mask_storeu_epi8(y + i, live, _mm512_mask_blend_epi8(_mm512_movepi8_mask(v), low, high));
  }
}

bool Q8LookupVbmiSupported() { return __builtin_cpu_supports("avx512vbmi"); }

}  // namespace onyx::linalg
#endif  // __x86_64__
