// q8_to_float.h's output stage on AVX2: 8 values a step, the tail masked.
#if defined(__x86_64__)
#include <immintrin.h>

#include "linalg/q8_to_float.h"

namespace onyx::linalg {

namespace {
// An empty asm the value passes through: the compiler cannot fuse the product into the sum
// across it (this file is built with -mfma, and GCC contracts across statements otherwise).
inline __m256 Rounded(__m256 v) {
  __asm__("" : "+x"(v));
  return v;
}
}  // namespace

void Q8ToFloatAvx2(void* row, int64_t n, float scale, const float* bias, float lo, float hi) {
  auto* p = static_cast<float*>(row);
  const __m256 sc = _mm256_set1_ps(scale), vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  const bool has_bias = bias != nullptr;
  const __m256 vb = _mm256_set1_ps(has_bias ? *bias : 0.0f);
  auto step = [&](__m256i acc) {
    __m256 v = Rounded(_mm256_mul_ps(_mm256_cvtepi32_ps(acc), sc));
    if (has_bias) v = _mm256_add_ps(v, vb);
    // max(lo, v) and min(hi, v) return v when it is NaN (the second operand), as Clip does.
    return _mm256_min_ps(vhi, _mm256_max_ps(vlo, v));
  };
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 a = step(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i)));
    const __m256 b = step(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 8)));
    _mm256_storeu_ps(p + i, a);
    _mm256_storeu_ps(p + i + 8, b);
  }
  for (; i < n; i += 8) {
    const int left = static_cast<int>(n - i < 8 ? n - i : 8);
    const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(left), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    const __m256i acc = _mm256_maskload_epi32(reinterpret_cast<const int*>(p + i), mask);
    _mm256_maskstore_ps(p + i, mask, step(acc));
  }
}

}  // namespace onyx::linalg
#endif  // __x86_64__
