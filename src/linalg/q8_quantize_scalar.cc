// q8_quantize.h's loops compiled for scalar (q8_quantize_impl.h).
#include "linalg/q8_quantize_impl.h"

namespace onyx::linalg {

void Q8MinMaxScalar(const float* x, int64_t n, float* lo, float* hi) { Q8MinMaxImpl(x, n, lo, hi); }

void Q8QuantizeU8Scalar(const float* x, int64_t n, float scale, uint8_t zero_point, uint8_t* out) {
  Q8QuantizeU8Impl(x, n, scale, zero_point, out);
}

}  // namespace onyx::linalg
