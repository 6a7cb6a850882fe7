// f16_widen.h on AVX2 + F16C: 8 values a step by vcvtph2ps. The instruction quiets a signaling
// NaN, so a step holding an infinity or NaN (never in real weights) is redone by the scalar
// reference.
#if defined(__x86_64__)
#include <immintrin.h>

#include "linalg/f16_widen.h"

namespace onyx::linalg {

void WidenHalfAvx2(const uint16_t* src, float* dst, int64_t n) {
  const __m128i exp_mask = _mm_set1_epi16(0x7C00);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
    if (_mm_movemask_epi8(_mm_cmpeq_epi16(_mm_and_si128(h, exp_mask), exp_mask)) != 0) WidenHalfScalar(src + i, dst + i, 8);
  }
  WidenHalfScalar(src + i, dst + i, n - i);
}

}  // namespace onyx::linalg
#endif  // __x86_64__
