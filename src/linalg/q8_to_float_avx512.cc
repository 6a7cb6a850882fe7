// q8_to_float.h's output stage on AVX-512: 16 values a step, the tail masked.
#if defined(__x86_64__)
#include <immintrin.h>

#include "linalg/q8_to_float.h"

namespace onyx::linalg {

void Q8ToFloatAvx512(void* row, int64_t n, float scale, const float* bias, float lo, float hi) {
  auto* p = static_cast<float*>(row);
  const __m512 sc = _mm512_set1_ps(scale), vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  const bool has_bias = bias != nullptr;
  const __m512 vb = _mm512_set1_ps(has_bias ? *bias : 0.0f);
  // The *_round_ forms (current rounding mode) are never contracted into an FMA, whatever the
  // compiler's fp-contract: the product and the sum round once each, as the graph's Mul and Add.
  auto step = [&](__m512i acc) {
    __m512 v = _mm512_mul_round_ps(_mm512_cvtepi32_ps(acc), sc, _MM_FROUND_CUR_DIRECTION);
    if (has_bias) v = _mm512_add_round_ps(v, vb, _MM_FROUND_CUR_DIRECTION);
    // max(lo, v) and min(hi, v) return v when it is NaN (the second operand), as Clip does.
    return _mm512_min_ps(vhi, _mm512_max_ps(vlo, v));
  };
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 a = step(_mm512_loadu_si512(p + i));
    const __m512 b = step(_mm512_loadu_si512(p + i + 16));
    _mm512_storeu_ps(p + i, a);
    _mm512_storeu_ps(p + i + 16, b);
  }
  for (; i < n; i += 16) {
    const auto mask = static_cast<__mmask16>(n - i >= 16 ? 0xFFFF : (1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(p + i, mask, step(_mm512_maskz_loadu_epi32(mask, p + i)));
  }
}

}  // namespace onyx::linalg
#endif  // __x86_64__
