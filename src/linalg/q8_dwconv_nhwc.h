// 2-D int8 depthwise convolution on channels-last images (com.microsoft.QLinearConv with
// channels_last = 1 and group = C = M), requantized: for each output pixel and channel c
//   acc = bias[c] + sum_{i, j} (X[y * sy + i * dy - top, x * sx + j * dx - left, c] - x_zp) * w[c, i, j]
//   out = clamp(nearbyint(float(acc) * scale[c]) + zero_point)
// (Q8DepthwiseRequant's formula, so the codes equal the NCHW Q8Depthwise's). With it the
// depthwise convs of MobileNet-like nets join QdqNhwcLayout's channels-last regions instead of
// cutting them, and their 1x1 convs run the direct channels-last kernel (AMX where present).
//
// The AVX-512 VNNI kernel (q8_dwconv_nhwc_avx512_vnni.cc) takes 64 channels a step: the codes of
// up to four kernel rows at one input column are interleaved (byte and word unpacks) into the
// quads of vpdpbusd, each dword one channel's four taps, once per output row, and every output
// pixel whose window covers that column reads them (at stride 1, three pixels of a 3x3 kernel);
// the weights are packed in the same order, so the sums come out in the order the narrowing
// packs put back. Padding reads a row of x_zp codes. Elsewhere the scalar reference runs.
#pragma once

#include <cstdint>
#include <vector>

#include "linalg/q8_dwconv.h"

namespace onyx {
class ThreadPool;
}

namespace onyx::linalg {

class PackedQ8DepthwiseNhwc {
 public:
  // Channels a block of the packed weights holds (one step of the kernel).
  static constexpr int64_t kBlock = 64;

  PackedQ8DepthwiseNhwc() = default;
  // w: [C, 1, kh, kw] (ONNX's order), int8 when w_signed else uint8; zero_points: C values when
  // zero_per_channel, else one. Stays empty() unless every w - zero point fits int8.
  PackedQ8DepthwiseNhwc(int64_t channels, int64_t kh, int64_t kw, const void* w, bool w_signed,
                        const int32_t* zero_points, bool zero_per_channel);

  bool empty() const { return plain_.empty(); }
  int64_t channels() const { return c_; }
  int64_t kh() const { return kh_; }
  int64_t kw() const { return kw_; }
  int64_t taps() const { return kh_ * kw_; }
  // [ceil(C / 64)][kw][ceil(kh / 4)][4 vectors][4 lanes][4 channels][4 kernel rows]: vector k,
  // lane L, dword d of block b is channel 64 b + 16 L + 4 k + d (the kernel's order); zero past
  // C and kh.
  const int8_t* data() const { return packed_.data(); }
  // [C][taps]: w - zero point (the reference's order).
  const int8_t* plain() const { return plain_.data(); }
  // Per channel: the sum of its taps' w - zero point.
  const int32_t* sums() const { return sums_.data(); }

 private:
  int64_t c_ = 0, kh_ = 0, kw_ = 0;
  std::vector<int8_t> packed_, plain_;
  std::vector<int32_t> sums_;
};

// Images [batch, ih, iw, C] (int8 when x_signed, else uint8) -> [batch, oh, ow, C] codes
// requantized with rq (rq.scale and rq.bias: C values; bias may be null). Splits the output
// pixels over pool. Throws std::invalid_argument for weights that do not match s or C.
void Q8DepthwiseNhwc(const PackedQ8DepthwiseNhwc& w, const Q8DepthwiseShape& s, int64_t batch, const void* x,
                     bool x_signed, int32_t x_zp, const Q8DepthwiseRequant& rq, void* out, ThreadPool* pool);

// The scalar reference of the above (one thread), for the tests and the CPUs without the kernel.
void Q8DepthwiseNhwcReference(const PackedQ8DepthwiseNhwc& w, const Q8DepthwiseShape& s, int64_t batch, const void* x,
                              bool x_signed, int32_t x_zp, const Q8DepthwiseRequant& rq, void* out);

// Whether Q8DepthwiseNhwc runs the AVX-512 VNNI kernel on this CPU now (else the reference).
bool Q8DepthwiseNhwcFast();

}  // namespace onyx::linalg
