// q8_quantize.h's loops compiled for avx512 (q8_quantize_impl.h).
#if defined(__x86_64__)
#include <immintrin.h>

#include "linalg/q8_quantize_impl.h"

namespace onyx::linalg {

// Explicit vectors: GCC keeps the generic min/max loop scalar. min_ps / max_ps return their
// second operand when the first is NaN, so NaNs are skipped as in the generic loop; the tail is
// loaded with zeros, which the range includes anyway.
void Q8MinMaxAvx512(const float* x, int64_t n, float* lo, float* hi) {
  __m512 l0 = _mm512_setzero_ps(), l1 = l0, h0 = l0, h1 = l0;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 a = _mm512_loadu_ps(x + i), b = _mm512_loadu_ps(x + i + 16);
    l0 = _mm512_min_ps(a, l0);
    h0 = _mm512_max_ps(a, h0);
    l1 = _mm512_min_ps(b, l1);
    h1 = _mm512_max_ps(b, h1);
  }
  for (; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512 a = _mm512_maskz_loadu_ps(m, x + i);
    l0 = _mm512_min_ps(a, l0);
    h0 = _mm512_max_ps(a, h0);
  }
  *lo = _mm512_reduce_min_ps(_mm512_min_ps(l0, l1));
  *hi = _mm512_reduce_max_ps(_mm512_max_ps(h0, h1));
}

void Q8QuantizeU8Avx512(const float* x, int64_t n, float scale, uint8_t zero_point, uint8_t* out) {
  Q8QuantizeImpl(x, n, scale, zero_point, out);
}

void Q8QuantizeS8Avx512(const float* x, int64_t n, float scale, int8_t zero_point, int8_t* out) {
  Q8QuantizeImpl(x, n, scale, zero_point, out);
}

void Q8DequantizeU8Avx512(const uint8_t* x, int64_t n, float scale, float zero_point, float* out) {
  Q8DequantizeImpl(x, n, scale, zero_point, out);
}

void Q8DequantizeS8Avx512(const int8_t* x, int64_t n, float scale, float zero_point, float* out) {
  Q8DequantizeImpl(x, n, scale, zero_point, out);
}

void Q8AddU8Avx512(const uint8_t* x, float rx, const uint8_t* y, int64_t y_step, float ry, float fixed, int64_t n,
                uint8_t* out) {
  Q8AddImpl(x, rx, y, y_step, ry, fixed, n, out);
}

void Q8AddS8Avx512(const int8_t* x, float rx, const int8_t* y, int64_t y_step, float ry, float fixed, int64_t n,
                int8_t* out) {
  Q8AddImpl(x, rx, y, y_step, ry, fixed, n, out);
}

}  // namespace onyx::linalg
#endif  // __x86_64__
