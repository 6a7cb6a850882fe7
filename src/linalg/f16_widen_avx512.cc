// f16_widen.h on AVX-512: 16 values a step by vcvtph2ps, the tail masked. The instruction
// quiets a signaling NaN, so a step holding an infinity or NaN (never in real weights) is redone
// by the scalar reference.
#if defined(__x86_64__)
#include <immintrin.h>

#include "linalg/f16_widen.h"

namespace onyx::linalg {

void WidenHalfAvx512(const uint16_t* src, float* dst, int64_t n) {
  const __m256i exp_mask = _mm256_set1_epi16(0x7C00);
  for (int64_t i = 0; i < n; i += 16) {
    const int64_t left = n - i;
    const auto mask = static_cast<__mmask16>(left >= 16 ? 0xFFFF : (1u << left) - 1);
    const __m256i h = _mm256_maskz_loadu_epi16(mask, src + i);
    _mm512_mask_storeu_ps(dst + i, mask, _mm512_cvtph_ps(h));
    if (_mm256_mask_cmpeq_epi16_mask(mask, _mm256_and_si256(h, exp_mask), exp_mask) != 0)
      WidenHalfScalar(src + i, dst + i, left >= 16 ? 16 : left);
  }
}

}  // namespace onyx::linalg
#endif  // __x86_64__
