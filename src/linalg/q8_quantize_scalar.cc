// q8_quantize.h's loops compiled for scalar (q8_quantize_impl.h).
#include "linalg/q8_quantize_impl.h"

namespace onyx::linalg {

void Q8MinMaxScalar(const float* x, int64_t n, float* lo, float* hi) { Q8MinMaxImpl(x, n, lo, hi); }

void Q8QuantizeU8Scalar(const float* x, int64_t n, float scale, uint8_t zero_point, uint8_t* out) {
  Q8QuantizeImpl(x, n, scale, zero_point, out);
}

void Q8QuantizeS8Scalar(const float* x, int64_t n, float scale, int8_t zero_point, int8_t* out) {
  Q8QuantizeImpl(x, n, scale, zero_point, out);
}

void Q8DequantizeU8Scalar(const uint8_t* x, int64_t n, float scale, float zero_point, float* out) {
  Q8DequantizeImpl(x, n, scale, zero_point, out);
}

void Q8DequantizeS8Scalar(const int8_t* x, int64_t n, float scale, float zero_point, float* out) {
  Q8DequantizeImpl(x, n, scale, zero_point, out);
}

void Q8AddU8Scalar(const uint8_t* x, float rx, const uint8_t* y, int64_t y_step, float ry, float fixed, int64_t n,
                uint8_t* out) {
  Q8AddImpl(x, rx, y, y_step, ry, fixed, n, out);
}

void Q8AddS8Scalar(const int8_t* x, float rx, const int8_t* y, int64_t y_step, float ry, float fixed, int64_t n,
                int8_t* out) {
  Q8AddImpl(x, rx, y, y_step, ry, fixed, n, out);
}

void Q8MulU8Scalar(const uint8_t* x, int32_t zx, const uint8_t* y, int64_t y_step, int32_t zy, float ratio, int32_t zc,
                int64_t n, uint8_t* out) {
  Q8MulImpl(x, zx, y, y_step, zy, ratio, zc, n, out);
}

void Q8MulS8Scalar(const int8_t* x, int32_t zx, const int8_t* y, int64_t y_step, int32_t zy, float ratio, int32_t zc,
                int64_t n, int8_t* out) {
  Q8MulImpl(x, zx, y, y_step, zy, ratio, zc, n, out);
}

}  // namespace onyx::linalg
