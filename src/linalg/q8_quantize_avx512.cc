// q8_quantize.h's loops compiled for avx512 (q8_quantize_impl.h).
#if defined(__x86_64__)
#include "linalg/q8_quantize_impl.h"

namespace onyx::linalg {

void Q8MinMaxAvx512(const float* x, int64_t n, float* lo, float* hi) { Q8MinMaxImpl(x, n, lo, hi); }

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
