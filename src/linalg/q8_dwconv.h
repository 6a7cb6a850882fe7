// One channel of a 2-D int8 depthwise convolution, exact in int32:
//   acc[y, x] = sum_{i, j} (X[y * sy + i * dy - top, x * sx + j * dx - left] - x_zp) * w[i, j]
// with the padding contributing nothing. X is copied once into a zero-padded int32 plane of
// X - x_zp; each output row is then a sum of kh * kw shifted plane rows, plain loops compiled
// per ISA (q8_dwconv_<isa>.cc) so they vectorize with that ISA's integer multiplies.
#pragma once

#include <cstdint>

namespace onyx::linalg {

struct Q8DepthwiseShape {
  int64_t ih = 0, iw = 0, oh = 0, ow = 0, kh = 0, kw = 0;
  int64_t sy = 1, sx = 1, dy = 1, dx = 1, top = 0, left = 0;
};

// int32 values of scratch Q8DepthwiseChannel needs.
int64_t Q8DepthwisePlaneSize(const Q8DepthwiseShape& s);

// x: [ih, iw] codes (int8 when x_signed, else uint8); w: [kh * kw] weights minus their zero
// point; plane: Q8DepthwisePlaneSize(s) int32 of scratch; acc: [oh, ow]. Runs the ISA the SGEMM
// uses now (ForceIsa / ONYX_LINALG_ISA apply).
void Q8DepthwiseChannel(const Q8DepthwiseShape& s, const uint8_t* x, bool x_signed, int32_t x_zp, const int32_t* w,
                        int32_t* plane, int32_t* acc);

// out[i] = clamp(nearbyint(float(acc[i] + bias) * scale) + zero_point) as int8 (out_signed) or
// uint8: the requantization of q8_gemm.h's Q8Output::kQuantized, for one run of values.
void Q8Requantize(const int32_t* acc, int64_t count, int32_t bias, float scale, int32_t zero_point, bool out_signed,
                  uint8_t* out);

}  // namespace onyx::linalg
