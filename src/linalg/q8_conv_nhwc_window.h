// The input rows a channels-last int8 convolution tile reads, shared by the AVX2 and AVX-512 VNNI
// drivers (q8_conv_nhwc_avx2.cc, q8_conv_nhwc_avx512_vnni.cc): for each output pixel of a tile and
// each tap, a pointer to the tap's C input codes, or to a row of zero-point codes where the tap
// falls in the padding. Internal linkage on purpose: each driver compiles it with its own ISA
// flags, and one shared out-of-line copy built for AVX-512 must never run on an AVX2-only CPU.
#pragma once

#include <cstdint>
#include <vector>

#include "linalg/q8_conv_nhwc.h"

namespace onyx::linalg {
namespace {

class Q8NhwcTapRows {
 public:
  Q8NhwcTapRows(const Q8ConvNhwcShape& s, const uint8_t* image, int64_t channels, int32_t x_zero)
      : s_(s),
        img_(image),
        c_(channels),
        zero_row_(static_cast<size_t>(channels), static_cast<uint8_t>(x_zero)),
        pointwise_(s.kh * s.kw == 1 && s.sy == 1 && s.sx == 1 && s.top == 0 && s.left == 0 && s.oh == s.ih &&
                   s.ow == s.iw),
        reach_y_((s.kh - 1) * s.dy),
        reach_x_((s.kw - 1) * s.dx),
        tap_offset_(static_cast<size_t>(s.kh * s.kw)) {
    // A window wholly inside the image: its taps' rows at fixed offsets from its first pixel's.
    for (int64_t i = 0; i < s.kh; ++i)
      for (int64_t j = 0; j < s.kw; ++j)
        tap_offset_[static_cast<size_t>(i * s.kw + j)] = (i * s.dy * s.iw + j * s.dx) * c_;
  }

  // ptr[t * k_rows + r]: tap t of output pixel p0 + r, r < k_rows; rows at or past `rows` repeat
  // the last pixel. Pointwise: output pixel p reads input pixel p (the general walk took about a
  // fifth of a 64 -> 256 1x1 conv's time). Else the first pixel once by division, the rest by
  // stepping.
  void Gather(int64_t p0, int rows, int k_rows, const uint8_t** ptr) const {
    if (pointwise_) {
      for (int r = 0; r < k_rows; ++r) ptr[r] = img_ + (p0 + (r < rows ? r : rows - 1)) * c_;
      return;
    }
    const int64_t taps = s_.kh * s_.kw;
    int64_t oy = p0 / s_.ow, ox = p0 % s_.ow;
    for (int r = 0; r < k_rows; ++r) {
      if (r > 0 && r < rows && ++ox == s_.ow) ox = 0, ++oy;
      const int64_t y0 = oy * s_.sy - s_.top, x0 = ox * s_.sx - s_.left;
      if (y0 >= 0 && y0 + reach_y_ < s_.ih && x0 >= 0 && x0 + reach_x_ < s_.iw) {  // no tap in the padding
        const uint8_t* base = img_ + (y0 * s_.iw + x0) * c_;
        for (int64_t t = 0; t < taps; ++t) ptr[t * k_rows + r] = base + tap_offset_[static_cast<size_t>(t)];
        continue;
      }
      for (int64_t i = 0; i < s_.kh; ++i) {
        const int64_t y = y0 + i * s_.dy;
        for (int64_t j = 0; j < s_.kw; ++j) {
          const int64_t x = x0 + j * s_.dx;
          const bool inside = y >= 0 && y < s_.ih && x >= 0 && x < s_.iw;
          ptr[(i * s_.kw + j) * k_rows + r] = inside ? img_ + (y * s_.iw + x) * c_ : zero_row_.data();
        }
      }
    }
  }

 private:
  const Q8ConvNhwcShape& s_;
  const uint8_t* img_;
  int64_t c_;
  std::vector<uint8_t> zero_row_;
  bool pointwise_;
  int64_t reach_y_, reach_x_;
  std::vector<int64_t> tap_offset_;
};

}  // namespace
}  // namespace onyx::linalg
