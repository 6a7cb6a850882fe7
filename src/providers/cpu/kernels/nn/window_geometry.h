// Sliding-window geometry shared by the convolution and pooling kernels: the window attributes
// (auto_pad, kernel_shape, strides, dilations, pads), output sizes, and im2col / col2im over any
// number of spatial dimensions. Graph-free apart from the attribute parsing.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "base/int_math.h"
#include "platform/thread_pool.h"
#include "providers/kernel.h"

namespace onyx::nn {

enum class AutoPad { kNotSet, kSameUpper, kSameLower, kValid };

// The window attributes as written on the node; empty vectors mean "use the default".
struct WindowAttrs {
  AutoPad auto_pad = AutoPad::kNotSet;
  std::vector<int64_t> kernel_shape;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads;  // [x1_begin, x2_begin, ..., x1_end, x2_end, ...]
  bool ceil_mode = false;
};

// Reads and value-checks the window attributes (sizes are checked against the input later).
WindowAttrs ParseWindowAttrs(const KernelInfo& info);

// A window resolved for one input shape. `in` and `out` are the spatial sizes of the image the
// window slides over and of the grid of window positions: for Conv and the pools `in` is the
// input image; for ConvTranspose and Col2Im `in` is the output image and `out` the input grid.
// The tap of kernel offset k at position o reads in[o * stride - pad_begin + k * dilation].
struct WindowGeometry {
  std::vector<int64_t> in, kernel, stride, dilation, pad_begin, pad_end, out;

  size_t rank() const { return in.size(); }
  int64_t InSize() const { return Product(in); }
  int64_t OutSize() const { return Product(out); }
  int64_t KernelSize() const { return Product(kernel); }
  // Each column of im2col is the input itself: kernel 1, stride 1, no padding.
  bool IsPointwise() const;
  std::string Describe() const;

  static int64_t Product(const std::vector<int64_t>& v) {
    int64_t p = 1;
    for (int64_t d : v) p *= d;
    return p;
  }
};

// Geometry of a forward window (Conv, DeformConv, pools) over the spatial dims of `x_shape`
// (N, C, D1, ...) with the given kernel. Honors auto_pad and ceil_mode; fails through ctx when
// the attributes do not fit the input.
WindowGeometry ResolveForwardWindow(const WindowAttrs& attrs, const Shape& x_shape, const std::vector<int64_t>& kernel,
                                    const KernelContext& ctx);

// Checks the per-dimension attribute sizes for `rank` spatial dims (kernel included).
void CheckWindowAttrRanks(const WindowAttrs& attrs, size_t rank, const KernelContext& ctx);

// Valid output range [lo, hi) of one dimension for kernel offset k: the positions o whose tap
// o * stride - pad + k * dilation lies in [0, in).
inline void ValidRange(int64_t in, int64_t out, int64_t stride, int64_t pad, int64_t koff, int64_t* lo, int64_t* hi) {
  const int64_t shift = pad - koff;  // tap = o * stride - shift
  *lo = std::clamp<int64_t>(CeilDiv(shift, stride), 0, out);
  *hi = std::clamp<int64_t>(CeilDiv(in + shift, stride), *lo, out);
}

// Decodes kernel offset index r (row-major over `kernel`) into per-dim offsets.
inline void KernelOffsets(int64_t r, const std::vector<int64_t>& kernel, int64_t* offs) {
  for (size_t d = kernel.size(); d-- > 0;) {
    offs[d] = r % kernel[d];
    r /= kernel[d];
  }
}

// Walks window positions [p_begin, p_end) (row-major over `out`) for one kernel offset, one
// segment of the last dim at a time: fn(image_offset, col, o_begin, o_end, lo, hi) says that
// positions o_begin..o_end-1 of the current row are columns col.. of the range, and that the
// taps of o in [lo, hi) read image[image_offset + o * stride_last] while the others fall into
// the padding (image_offset is -1 when the whole row does).
template <typename Fn>
void ForEachWindowSegment(const WindowGeometry& g, const int64_t* koffs, int64_t p_begin, int64_t p_end, Fn&& fn) {
  const size_t r = g.rank();
  const int64_t out_last = g.out[r - 1];
  if (p_end <= p_begin || out_last == 0) return;
  int64_t lo = 0, hi = 0;
  ValidRange(g.in[r - 1], out_last, g.stride[r - 1], g.pad_begin[r - 1], koffs[r - 1] * g.dilation[r - 1], &lo, &hi);
  const int64_t last_shift = koffs[r - 1] * g.dilation[r - 1] - g.pad_begin[r - 1];
  // Odometer over the outer dims, started at p_begin's row.
  std::vector<int64_t> pos(r > 1 ? r - 1 : 1, 0);
  int64_t rem = p_begin / out_last;
  for (size_t d = r - 1; d-- > 0;) {
    pos[d] = rem % g.out[d];
    rem /= g.out[d];
  }
  for (int64_t row_start = p_begin - p_begin % out_last; row_start < p_end; row_start += out_last) {
    int64_t offset = 0;
    bool inside = true;
    for (size_t d = 0; d + 1 < r; ++d) {
      const int64_t i = pos[d] * g.stride[d] - g.pad_begin[d] + koffs[d] * g.dilation[d];
      if (i < 0 || i >= g.in[d]) {
        inside = false;
        break;
      }
      offset = offset * g.in[d] + i;
    }
    const int64_t o_begin = std::max(p_begin, row_start) - row_start;
    const int64_t o_end = std::min(p_end, row_start + out_last) - row_start;
    const int64_t col = row_start + o_begin - p_begin;
    if (inside) {
      fn(offset * g.in[r - 1] + last_shift, col, o_begin, o_end, std::clamp(lo, o_begin, o_end),
         std::clamp(hi, o_begin, o_end));
    } else {
      fn(int64_t{-1}, col, o_begin, o_end, o_begin, o_begin);
    }
    for (size_t d = r - 1; d-- > 0;) {
      if (++pos[d] < g.out[d]) break;
      pos[d] = 0;
    }
  }
}

// im2col for `channels` channels of one image: rows (c, k1..kn) in row-major order, columns the
// window positions [p_begin, p_end) (row-major over out); padding reads 0. col is
// [channels * K, p_end - p_begin].
template <typename T>
void Im2Col(const T* image, int64_t channels, const WindowGeometry& g, int64_t p_begin, int64_t p_end, T* col,
            ThreadPool* pool) {
  const int64_t ksize = g.KernelSize();
  const int64_t in_size = g.InSize();
  const int64_t stride_last = g.stride.back();
  const int64_t cols = p_end - p_begin;
  ThreadPool::For(pool, channels * ksize, static_cast<double>(cols), [&](int64_t begin, int64_t end) {
    std::vector<int64_t> koffs(g.rank());
    for (int64_t row = begin; row < end; ++row) {
      const T* src = image + (row / ksize) * in_size;
      KernelOffsets(row % ksize, g.kernel, koffs.data());
      T* dst = col + row * cols;
      ForEachWindowSegment(g, koffs.data(), p_begin, p_end,
                           [&](int64_t off, int64_t c, int64_t o_begin, int64_t o_end, int64_t lo, int64_t hi) {
                             T* d = dst + c - o_begin;  // d[o] is the column of position o
                             std::fill(d + o_begin, d + lo, T{});
                             if (stride_last == 1) {
                               if (hi > lo) std::memcpy(d + lo, src + off + lo, static_cast<size_t>(hi - lo) * sizeof(T));
                             } else {
                               for (int64_t o = lo; o < hi; ++o) d[o] = src[off + o * stride_last];
                             }
                             std::fill(d + hi, d + o_end, T{});
                           });
    }
  });
}

// The adjoint of Im2Col: adds every column entry into the image tap it came from (taps in the
// padding are dropped). `image` holds `channels` planes of InSize() and is accumulated into.
template <typename T>
void Col2ImAdd(const T* col, int64_t channels, const WindowGeometry& g, int64_t p_begin, int64_t p_end, T* image,
               ThreadPool* pool) {
  const int64_t ksize = g.KernelSize();
  const int64_t in_size = g.InSize();
  const int64_t stride_last = g.stride.back();
  const int64_t cols = p_end - p_begin;
  // One channel per task: the rows of a channel all write into its own plane.
  ThreadPool::For(pool, channels, static_cast<double>(ksize * cols), [&](int64_t begin, int64_t end) {
    std::vector<int64_t> koffs(g.rank());
    for (int64_t c = begin; c < end; ++c) {
      T* dst = image + c * in_size;
      for (int64_t k = 0; k < ksize; ++k) {
        KernelOffsets(k, g.kernel, koffs.data());
        const T* src = col + (c * ksize + k) * cols;
        ForEachWindowSegment(g, koffs.data(), p_begin, p_end,
                             [&](int64_t off, int64_t cc, int64_t o_begin, int64_t, int64_t lo, int64_t hi) {
                               const T* s = src + cc - o_begin;
                               for (int64_t o = lo; o < hi; ++o) dst[off + o * stride_last] += s[o];
                             });
      }
    }
  });
}

// Columns per im2col tile so a [rows, columns] buffer stays near `budget_bytes`.
inline int64_t ColumnsPerTile(int64_t rows, size_t elem_bytes, int64_t total_columns,
                              int64_t budget_bytes = int64_t{8} << 20) {
  const int64_t per_column = std::max<int64_t>(1, rows * static_cast<int64_t>(elem_bytes));
  return std::clamp<int64_t>(budget_bytes / per_column, 256, std::max<int64_t>(total_columns, 256));
}

}  // namespace onyx::nn
