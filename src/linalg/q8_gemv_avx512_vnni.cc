// q8_gemv.h's product with AVX-512 VNNI: per group of four k, the row's four codes broadcast
// against a 64-byte row of the panel (16 columns x 4 k) in one vpdpbusd; four panels at once
// for independent accumulators.
#if defined(__x86_64__)
#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace onyx::linalg {

void Q8GemvPanelsAvx512Vnni(const uint8_t* a, const int8_t* packed, int64_t kp, int64_t panels, int32_t* sums) {
  const int64_t groups = kp / 4, panel_bytes = kp * 16;
  int64_t p = 0;
  for (; p + 4 <= panels; p += 4) {
    const int8_t* b = packed + p * panel_bytes;
    __m512i s0 = _mm512_setzero_si512(), s1 = s0, s2 = s0, s3 = s0;
    for (int64_t g = 0; g < groups; ++g) {
      int32_t quad;
      std::memcpy(&quad, a + g * 4, 4);
      const __m512i av = _mm512_set1_epi32(quad);
      s0 = _mm512_dpbusd_epi32(s0, av, _mm512_loadu_si512(b + g * 64));
      s1 = _mm512_dpbusd_epi32(s1, av, _mm512_loadu_si512(b + panel_bytes + g * 64));
      s2 = _mm512_dpbusd_epi32(s2, av, _mm512_loadu_si512(b + 2 * panel_bytes + g * 64));
      s3 = _mm512_dpbusd_epi32(s3, av, _mm512_loadu_si512(b + 3 * panel_bytes + g * 64));
    }
    _mm512_storeu_si512(sums + p * 16, s0);
    _mm512_storeu_si512(sums + p * 16 + 16, s1);
    _mm512_storeu_si512(sums + p * 16 + 32, s2);
    _mm512_storeu_si512(sums + p * 16 + 48, s3);
  }
  for (; p < panels; ++p) {
    const int8_t* b = packed + p * panel_bytes;
    __m512i s = _mm512_setzero_si512();
    for (int64_t g = 0; g < groups; ++g) {
      int32_t quad;
      std::memcpy(&quad, a + g * 4, 4);
      s = _mm512_dpbusd_epi32(s, _mm512_set1_epi32(quad), _mm512_loadu_si512(b + g * 64));
    }
    _mm512_storeu_si512(sums + p * 16, s);
  }
}

}  // namespace onyx::linalg
#endif  // __x86_64__
