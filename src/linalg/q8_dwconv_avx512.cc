// Q8Depthwise and Q8Requantize compiled for avx512 (q8_dwconv_impl.h).
#if defined(__x86_64__)

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12 reports its own AVX-512 headers' undefined-vector idiom as maybe uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "linalg/q8_dwconv_impl.h"

namespace onyx::linalg {

void Q8DepthwiseAvx512(const Q8DepthwiseShape& s, int64_t count, const uint8_t* x, bool x_signed, int32_t x_zp,
                 const int32_t* w, const Q8DepthwiseRequant* rq, void* out, int32_t* scratch) {
  Q8DepthwiseImpl(s, count, x, x_signed, x_zp, w, rq, out, scratch);
}

void Q8RequantizeAvx512(const int32_t* acc, int64_t count, int32_t bias, float scale, int32_t zero_point,
                  bool out_signed, uint8_t* out) {
  Q8RequantizeImpl(acc, count, bias, scale, zero_point, out_signed, out);
}

}  // namespace onyx::linalg
#endif  // __x86_64__
