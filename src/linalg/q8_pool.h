// 2-D max pooling of 8-bit codes (MaxPool on uint8 / int8 without Indices), one plane at a time,
// compiled per ISA (q8_pool_<isa>.cc) so the row loops vectorize. Each output row is the max of
// its window's input rows (a vertical pass over contiguous bytes) followed by a max along the
// row at each kernel offset; padding reads as the type's lowest code, so a window with no tap
// inside the input gives the lowest code, as the generic pooling loop does.
#pragma once

#include <cstdint>

namespace onyx::linalg {

struct Q8PoolGeometry {
  int64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0;
};

// Elements of scratch Q8MaxPool2d needs (see Q8PoolRows).
int64_t Q8MaxPool2dScratch(const Q8PoolGeometry& g);

// The scratch's parts, in codes: the padded row of window maxima, the row of column maxima and
// the stride-2 outputs packed; `span` and `packed` are the loop lengths over the latter two,
// rounded up to whole blocks of kQ8PoolBlock codes.
constexpr int64_t kQ8PoolBlock = 64;
// Output rows a step of the pooling runs over before the next step reads them; the scratch holds
// that many rows and wide rows.
constexpr int64_t kQ8PoolBatch = 8;
struct Q8PoolRows {
  int64_t row = 0, wide = 0, span = 0, packed = 0;
};
Q8PoolRows Q8PoolRowLayout(const Q8PoolGeometry& g);

// y[oy, ox] = max over taps (ky, kx) inside x of x[oy * stride_h - pad_top + ky * dilation_h,
// ox * stride_w - pad_left + kx * dilation_w]; x is [in_h, in_w], y [out_h, out_w].
void Q8MaxPool2dU8(const Q8PoolGeometry& g, const uint8_t* x, uint8_t* y, uint8_t* scratch);
void Q8MaxPool2dS8(const Q8PoolGeometry& g, const int8_t* x, int8_t* y, int8_t* scratch);

}  // namespace onyx::linalg
