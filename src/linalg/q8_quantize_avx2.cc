// q8_quantize.h's loops compiled for avx2 (q8_quantize_impl.h).
#if defined(__x86_64__)
#include <immintrin.h>

#include "linalg/q8_quantize_impl.h"

namespace onyx::linalg {

// Explicit vectors: GCC keeps the generic min/max loop scalar. min_ps / max_ps return their
// second operand when the first is NaN, so NaNs are skipped as in the generic loop.
void Q8MinMaxAvx2(const float* x, int64_t n, float* lo, float* hi) {
  __m256 l0 = _mm256_setzero_ps(), l1 = l0, h0 = l0, h1 = l0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 a = _mm256_loadu_ps(x + i), b = _mm256_loadu_ps(x + i + 8);
    l0 = _mm256_min_ps(a, l0);
    h0 = _mm256_max_ps(a, h0);
    l1 = _mm256_min_ps(b, l1);
    h1 = _mm256_max_ps(b, h1);
  }
  alignas(32) float ls[8], hs[8];
  _mm256_store_ps(ls, _mm256_min_ps(l0, l1));
  _mm256_store_ps(hs, _mm256_max_ps(h0, h1));
  float a = 0.0f, b = 0.0f;
  for (int j = 0; j < 8; ++j) {
    a = ls[j] < a ? ls[j] : a;
    b = hs[j] > b ? hs[j] : b;
  }
  for (; i < n; ++i) {
    a = x[i] < a ? x[i] : a;
    b = x[i] > b ? x[i] : b;
  }
  *lo = a;
  *hi = b;
}

void Q8QuantizeU8Avx2(const float* x, int64_t n, float scale, uint8_t zero_point, uint8_t* out) {
  Q8QuantizeImpl(x, n, scale, zero_point, out);
}

void Q8QuantizeS8Avx2(const float* x, int64_t n, float scale, int8_t zero_point, int8_t* out) {
  Q8QuantizeImpl(x, n, scale, zero_point, out);
}

void Q8DequantizeU8Avx2(const uint8_t* x, int64_t n, float scale, float zero_point, float* out) {
  Q8DequantizeImpl(x, n, scale, zero_point, out);
}

void Q8DequantizeS8Avx2(const int8_t* x, int64_t n, float scale, float zero_point, float* out) {
  Q8DequantizeImpl(x, n, scale, zero_point, out);
}

void Q8AddU8Avx2(const uint8_t* x, float rx, const uint8_t* y, int64_t y_step, float ry, float fixed, int64_t n,
                uint8_t* out) {
  Q8AddImpl(x, rx, y, y_step, ry, fixed, n, out);
}

void Q8AddS8Avx2(const int8_t* x, float rx, const int8_t* y, int64_t y_step, float ry, float fixed, int64_t n,
                int8_t* out) {
  Q8AddImpl(x, rx, y, y_step, ry, fixed, n, out);
}

void Q8MulU8Avx2(const uint8_t* x, int32_t zx, const uint8_t* y, int64_t y_step, int32_t zy, float ratio, int32_t zc,
                int64_t n, uint8_t* out) {
  Q8MulImpl(x, zx, y, y_step, zy, ratio, zc, n, out);
}

void Q8MulS8Avx2(const int8_t* x, int32_t zx, const int8_t* y, int64_t y_step, int32_t zy, float ratio, int32_t zc,
                int64_t n, int8_t* out) {
  Q8MulImpl(x, zx, y, y_step, zy, ratio, zc, n, out);
}

}  // namespace onyx::linalg
#endif  // __x86_64__
