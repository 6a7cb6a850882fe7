// Linear (not antialiased) Resize / Upsample on uint8 and int8, computed the way ONNX Runtime's
// CPU kernel computes it, so quantized models (a linear Resize between QLinear ops, or one whose
// DQ/Q pair was dropped) give ORT's integers exactly. ORT picks one of three paths by rank and
// scales, each with its own rounding:
//   - rank 2, and rank 4 with scales [1, 1, h, w] (NCHW): four float weights per output in the
//     order dx2*dy2, dx1*dy2, dx2*dy1, dx1*dy1, summed in float, truncated to the integer;
//   - rank 4 with scales [1, h, w, 1] and h != 1 (NHWC): weights in 1/1024 steps, their products
//     summed in int32 and divided by 2^20 (truncating toward zero);
//   - rank 3, and rank 5 with scales [1, 1, d, h, w]: eight float weights, truncated.
// Coordinates are computed in float (ORT's formulas), an axis of scale 1 maps j to j, and an
// output of the input's shape is a copy. Other ranks and scales ORT rejects; the caller keeps
// its own path for them.
#pragma once

#include <cstdint>
#include <vector>

#include "onyx/dtype.h"
#include "providers/cpu/kernels/image/resize_coord.h"

namespace onyx {

class ThreadPool;

struct Linear8BitResize {
  DataType dtype = DataType::kUInt8;  // kUInt8 or kInt8
  const void* x = nullptr;
  void* y = nullptr;
  std::vector<int64_t> in_dims, out_dims;
  std::vector<float> scales;  // one per axis, 1 for the axes not resized (ORT's float scales)
  std::vector<float> roi;     // starts then ends, one per axis (read by tf_crop_and_resize only)
  ResizeCoord coord = ResizeCoord::kHalfPixel;
  float extrapolation = 0.0f;  // tf_crop_and_resize's value outside the input
};

// Runs ORT's path for r and returns true, or returns false (nothing written) when ORT has no
// linear path for this rank and these scales.
bool ResizeLinear8Bit(const Linear8BitResize& r, ThreadPool* pool);

}  // namespace onyx
