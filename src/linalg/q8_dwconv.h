// 2-D int8 depthwise convolution, exact in int32, for a run of channels:
//   acc[c, y, x] = sum_{i, j} (X[c, y * sy + i * dy - top, x * sx + j * dx - left] - x_zp) * w[c, i, j]
// with the padding contributing nothing; then either stored as int32 (ConvInteger) or
// requantized to int8/uint8 with the channel's bias and scale (QLinearConv) while it is in cache.
//
// Each channel is copied once into a zero-padded plane of X - x_zp, split into stride phases
// (plane row r in phase r % sy, column c in phase c % sx), so that every tap reads one contiguous
// run of it: the output is computed over the whole plane width (the columns past ow are computed
// and dropped) in long vectorized loops. The values (X - x_zp, w - w_zp) lie in [-255, 255], so
// the plane holds 16-bit pairs (column c and c + dx) and two taps are one vpmaddwd (AVX2,
// AVX-512; plain loops in the scalar variant); kernels of more than 64 tap pairs take an int32
// loop. Compiled per ISA (q8_dwconv_<isa>.cc); details in q8_dwconv_impl.h. With AVX-512 VNNI,
// kernels up to 4 wide with int8 weights skip the plane: vpdpbusd on quads shuffled straight
// from a padded byte copy of the channel (q8_dwconv_avx512_vnni.cc).
#pragma once

#include <cstdint>

namespace onyx::linalg {

struct Q8DepthwiseShape {
  int64_t ih = 0, iw = 0, oh = 0, ow = 0, kh = 0, kw = 0;
  int64_t sy = 1, sx = 1, dy = 1, dx = 1, top = 0, left = 0;
};

// The requantization of a run of channels: out = clamp(nearbyint(float(acc + bias[c]) *
// scale[c]) + zero_point), int8 when out_signed else uint8 (bias may be null).
struct Q8DepthwiseRequant {
  const int32_t* bias = nullptr;
  const float* scale = nullptr;
  int32_t zero_point = 0;
  bool out_signed = false;
};

// int32 values of scratch Q8Depthwise needs (one channel's plane and accumulators).
int64_t Q8DepthwiseScratchSize(const Q8DepthwiseShape& s);

// Channels [0, count): x + c * ih * iw (codes, int8 when x_signed, else uint8); w + c * kh * kw
// (weights minus their zero point); out + c * oh * ow: int32 when rq is null, else the
// requantized bytes with rq->bias[c] and rq->scale[c]. scratch: Q8DepthwiseScratchSize(s) int32,
// any contents (a buffer kept between calls). Runs the ISA the SGEMM uses now (ForceIsa /
// ONYX_LINALG_ISA apply), chosen once a call.
void Q8Depthwise(const Q8DepthwiseShape& s, int64_t count, const uint8_t* x, bool x_signed, int32_t x_zp,
                 const int32_t* w, const Q8DepthwiseRequant* rq, void* out, int32_t* scratch);

// out[i] = clamp(nearbyint(float(acc[i] + bias) * scale) + zero_point) as int8 (out_signed) or
// uint8: the requantization of q8_gemm.h's Q8Output::kQuantized, for one run of values.
void Q8Requantize(const int32_t* acc, int64_t count, int32_t bias, float scale, int32_t zero_point, bool out_signed,
                  uint8_t* out);

}  // namespace onyx::linalg
