// The linalg convolution shape of a resolved 1-D or 2-D window (1-D is H = 1), shared by the
// NCHW Conv kernels and the blocked NchwcConv.
#pragma once

#include <cstdint>

#include "linalg/conv.h"
#include "providers/cpu/kernels/nn/window_geometry.h"

namespace onyx::nn {

inline linalg::Conv2dShape ToConv2dShape(const WindowGeometry& g, int64_t batch, int64_t in_channels,
                                         int64_t out_channels, int64_t group) {
  const size_t r = g.rank(), w = r - 1;
  linalg::Conv2dShape s;
  s.batch = batch;
  s.in_channels = in_channels;
  s.out_channels = out_channels;
  s.group = group;
  s.in_w = g.in[w];
  s.kernel_w = g.kernel[w];
  s.stride_w = g.stride[w];
  s.dilation_w = g.dilation[w];
  s.pad_left = g.pad_begin[w];
  s.pad_right = g.pad_end[w];
  s.out_w = g.out[w];
  s.out_h = 1;
  if (r == 2) {
    s.in_h = g.in[0];
    s.kernel_h = g.kernel[0];
    s.stride_h = g.stride[0];
    s.dilation_h = g.dilation[0];
    s.pad_top = g.pad_begin[0];
    s.pad_bottom = g.pad_end[0];
    s.out_h = g.out[0];
  }
  return s;
}

}  // namespace onyx::nn
