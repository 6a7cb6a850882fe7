// Q8DepthwiseChannel and Q8Requantize compiled for avx512 (q8_dwconv_impl.h).
#if defined(__x86_64__)
#include "linalg/q8_dwconv_impl.h"

namespace onyx::linalg {

void Q8DepthwiseChannelAvx512(const Q8DepthwiseShape& s, const uint8_t* x, bool x_signed, int32_t x_zp, const int32_t* w,
                              int32_t* plane, int32_t* acc) {
  Q8DepthwiseChannelImpl(s, x, x_signed, x_zp, w, plane, acc);
}

void Q8RequantizeAvx512(const int32_t* acc, int64_t count, int32_t bias, float scale, int32_t zero_point,
                        bool out_signed, uint8_t* out) {
  Q8RequantizeImpl(acc, count, bias, scale, zero_point, out_signed, out);
}

}  // namespace onyx::linalg
#endif  // __x86_64__
