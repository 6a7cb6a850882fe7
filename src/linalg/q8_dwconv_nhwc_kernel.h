// What Q8DepthwiseNhwc's ISA kernels get (q8_dwconv_nhwc.h), prepared once a call.
#pragma once

#include <cstdint>

#include "linalg/q8_dwconv.h"

namespace onyx::linalg {

// Kernels of more rows run the reference.
constexpr int64_t kQ8DepthwiseNhwcMaxRows = 16;

struct Q8DepthwiseNhwcCall {
  const int8_t* w = nullptr;      // PackedQ8DepthwiseNhwc::data()
  int64_t channels = 0;
  const int32_t* init = nullptr;  // per channel, in the packed order: bias - zx * sum of its weights
  const float* scale = nullptr;   // per channel, in the packed order
  float lo = 0, hi = 0;           // the clamp before rounding: the output type's range - zero_point
  int32_t zero_point = 0;
  bool x_signed = false, out_signed = false;
  const uint8_t* pad_row = nullptr;  // C codes of x_zp (and 64 more), read where a tap is in the padding
};

// Output pixels [p0, p1) of the batch (image p / (oh * ow)).
void Q8DepthwiseNhwcAvx512Vnni(const Q8DepthwiseNhwcCall& call, const Q8DepthwiseShape& s, const uint8_t* x,
                               uint8_t* out, int64_t p0, int64_t p1);

}  // namespace onyx::linalg
