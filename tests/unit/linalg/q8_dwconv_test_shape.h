// The depthwise tests' cases name a window by its input size, kernel, strides, dilations and
// four pads; this makes the Q8DepthwiseShape (output size included) from any such case.
#pragma once

#include "linalg/q8_dwconv.h"

namespace onyx::linalg {

template <class Case>
Q8DepthwiseShape DepthwiseShapeOf(const Case& c) {
  Q8DepthwiseShape s;
  s.ih = c.ih, s.iw = c.iw, s.kh = c.kh, s.kw = c.kw, s.sy = c.sy, s.sx = c.sx, s.dy = c.dy, s.dx = c.dx;
  s.top = c.top, s.left = c.left;
  s.oh = (c.ih + c.top + c.bottom - ((c.kh - 1) * c.dy + 1)) / c.sy + 1;
  s.ow = (c.iw + c.left + c.right - ((c.kw - 1) * c.dx + 1)) / c.sx + 1;
  return s;
}

}  // namespace onyx::linalg
