// The int8 convolutions' compute paths (quant_conv_compute.h): im2col rows, the NCHW and
// channels-last GEMM paths and the depthwise loops.
#include "providers/cpu/kernels/quantization/quant_conv_compute.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "base/int_math.h"
#include "linalg/q8_conv_w.h"
#include "linalg/q8_lut.h"
#include "linalg/q8_quantize.h"
#include "linalg/x8_transpose.h"
#include "platform/thread_pool.h"

namespace onyx {
namespace quant_conv {
namespace {

// Output pixels per im2col tile: bounds the scratch (pixels x C/group x kernel bytes).
constexpr int64_t kPixelTile = 1024;

// Rows of im2col^T for output pixels [p0, p0 + count) of image n, group grp: row q holds
// (c, kernel offset) codes of the input, x_zp where the window is in the padding.
void Im2Row(const ConvGeometry& g, const uint8_t* x, int64_t grp, int64_t p0, int64_t count, uint8_t x_zp,
            uint8_t* rows, ThreadPool* pool) {
  const int64_t cg = g.channels / g.group, depth = cg * g.kernel_size;
  const size_t nd = g.in.size();
  const uint8_t* xg = x + grp * cg * g.in_size;
  ThreadPool::For(pool, count, 2.0 * static_cast<double>(depth), [&](int64_t qb, int64_t qe) {
    std::vector<int64_t> base(nd), kofs(nd);
    for (int64_t q = qb; q < qe; ++q) {
      int64_t prem = p0 + q;
      for (size_t d = nd; d-- > 0;) {
        base[d] = (prem % g.out[d]) * g.stride[d] - g.pad_begin[d];
        prem /= g.out[d];
      }
      uint8_t* row = rows + q * depth;
      if (nd == 2) {  // the common case, without the per-element coordinate loop
        const int64_t kh = g.kernel[0], kw = g.kernel[1], ih = g.in[0], iw = g.in[1];
        for (int64_t c = 0; c < cg; ++c) {
          const uint8_t* xc = xg + c * g.in_size;
          for (int64_t i = 0; i < kh; ++i) {
            const int64_t y = base[0] + i * g.dilation[0];
            uint8_t* out = row + (c * kh + i) * kw;
            if (y < 0 || y >= ih) {
              std::fill(out, out + kw, x_zp);
              continue;
            }
            for (int64_t j = 0; j < kw; ++j) {
              const int64_t xx = base[1] + j * g.dilation[1];
              out[j] = xx >= 0 && xx < iw ? xc[y * iw + xx] : x_zp;
            }
          }
        }
        continue;
      }
      for (int64_t r = 0; r < depth; ++r) {
        const int64_t c = r / g.kernel_size;
        int64_t krem = r % g.kernel_size;
        for (size_t d = nd; d-- > 0;) kofs[d] = (krem % g.kernel[d]) * g.dilation[d], krem /= g.kernel[d];
        int64_t offset = 0;
        bool inside = true;
        for (size_t d = 0; d < nd && inside; ++d) {
          const int64_t pos = base[d] + kofs[d];
          inside = pos >= 0 && pos < g.in[d];
          offset = offset * g.in[d] + pos;
        }
        row[r] = inside ? xg[c * g.in_size + offset] : x_zp;
      }
    }
  });
}

// Channels [c0, c0 + count) of one image, transposed to pixels x channels (channels-last), in
// blocks of pixels over the threads, each through linalg's vector byte transpose (a byte loop
// with strided stores was a quarter of MobileNetV2's QDQ run on an AVX2 Zen 3).
void ToChannelsLast(const uint8_t* x, int64_t count, int64_t pixels, uint8_t* out, ThreadPool* pool) {
  constexpr int64_t kBlock = 256;  // pixels a block
  ThreadPool::For(pool, CeilDiv(pixels, kBlock), 1.0 * static_cast<double>(kBlock * count), [&](int64_t b0, int64_t b1) {
    const int64_t p0 = b0 * kBlock, p1 = std::min(pixels, b1 * kBlock);
    linalg::Transpose2D8(x + p0, static_cast<size_t>(pixels), out + p0 * count, static_cast<size_t>(count),
                         static_cast<size_t>(count), static_cast<size_t>(p1 - p0));
  });
}

// Rows of im2col^T of a 2-D convolution from a channels-last image (xt: [H * W, C/group]) for
// output pixels [p0, p0 + count): row q is (kh, kw, c), x_zp in the padding.
void Im2RowHwc(const ConvGeometry& g, const uint8_t* xt, int64_t p0, int64_t count, uint8_t x_zp, uint8_t* rows,
               ThreadPool* pool) {
  const int64_t cg = g.channels / g.group, kh = g.kernel[0], kw = g.kernel[1];
  const int64_t depth = cg * kh * kw, ih = g.in[0], iw = g.in[1];
  ThreadPool::For(pool, count, 2.0 * static_cast<double>(depth), [&](int64_t qb, int64_t qe) {
    for (int64_t q = qb; q < qe; ++q) {
      const int64_t oy = (p0 + q) / g.out[1], ox = (p0 + q) % g.out[1];
      const int64_t y0 = oy * g.stride[0] - g.pad_begin[0], x0 = ox * g.stride[1] - g.pad_begin[1];
      uint8_t* row = rows + q * depth;
      for (int64_t i = 0; i < kh; ++i) {
        const int64_t y = y0 + i * g.dilation[0];
        for (int64_t j = 0; j < kw; ++j, row += cg) {
          const int64_t xx = x0 + j * g.dilation[1];
          if (y < 0 || y >= ih || xx < 0 || xx >= iw) std::memset(row, x_zp, static_cast<size_t>(cg));
          else std::memcpy(row, xt + (y * iw + xx) * cg, static_cast<size_t>(cg));
        }
      }
    }
  });
}

}  // namespace

// A 2-D (or 1-D) convolution on the weight-stationary int8 GEMM: C [M/group, pixels] is the NCHW output,
// over the image itself (pointwise) or its implicit im2col (Q8ConvW, no im2col buffer).
void ConvNchw(const ConvGeometry& g, const uint8_t* xb, bool x_signed, int32_t x_zp, const QuantWeights& w,
              const linalg::Q8Output& out, size_t out_elem_size, ThreadPool* pool) {
  const int64_t cg = g.channels / g.group, mg = g.out_channels / g.group;
  bool pointwise = g.kernel_size == 1 && g.out_size == g.in_size;
  for (size_t d = 0; d < g.in.size(); ++d) pointwise = pointwise && g.stride[d] == 1 && g.pad_begin[d] == 0;
  // A 1-D convolution is a 2-D one over a single row: its dimension is the width.
  const size_t wd = g.in.size() - 1;
  linalg::Q8ConvShape s;
  s.channels = cg, s.iw = g.in[wd], s.ow = g.out[wd], s.kw = g.kernel[wd], s.sx = g.stride[wd];
  s.dx = g.dilation[wd], s.left = g.pad_begin[wd];
  if (wd == 1) {
    s.ih = g.in[0], s.oh = g.out[0], s.kh = g.kernel[0], s.sy = g.stride[0], s.dy = g.dilation[0];
    s.top = g.pad_begin[0];
  } else {
    s.ih = s.oh = s.kh = 1;
  }
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t grp = 0; grp < g.group; ++grp) {
      const uint8_t* image = xb + (n * g.channels + grp * cg) * g.in_size;
      linalg::Q8Output o = out;
      o.transposed = false;
      o.ldc = g.out_size;
      if (o.scale_per_column) o.scale += grp * mg;
      if (o.bias_int != nullptr) o.bias_int += grp * mg;
      if (o.bias != nullptr) o.bias += grp * mg;
      o.c = static_cast<uint8_t*>(out.c) + (n * g.out_channels + grp * mg) * g.out_size * out_elem_size;
      const linalg::PackedQ8W& pw = w.nchw[static_cast<size_t>(grp)];
      if (pointwise) linalg::Q8GemmW(pw, g.out_size, image, x_signed, g.in_size, x_zp, o, pool);
      else linalg::Q8ConvW(pw, s, image, x_signed, x_zp, o, pool);
    }
}

linalg::Q8DepthwiseShape DepthwiseShapeOf(const ConvGeometry& g) {
  linalg::Q8DepthwiseShape s;
  s.ih = g.in[0], s.iw = g.in[1], s.oh = g.out[0], s.ow = g.out[1], s.kh = g.kernel[0], s.kw = g.kernel[1];
  s.sy = g.stride[0], s.sx = g.stride[1], s.dy = g.dilation[0], s.dx = g.dilation[1];
  s.top = g.pad_begin[0], s.left = g.pad_begin[1];
  return s;
}

void DepthwisePlanes(const ConvGeometry& g, const uint8_t* x, bool x_signed, int32_t x_zp, const int32_t* wc,
                     const linalg::Q8DepthwiseRequant* rq, void* out, size_t out_elem_size, int64_t p0, int64_t p1,
                     const std::function<void(int64_t, int64_t)>* finish) {
  const linalg::Q8DepthwiseShape s = DepthwiseShapeOf(g);
  const int64_t m = g.out_channels;
  // Per-thread, grown on demand and kept for later calls: a fresh zeroed block of a few hundred
  // KB each call came from mmap (page faults) and its zeroing; Q8Depthwise needs no zeros.
  thread_local std::vector<int32_t> scratch;
  const auto need = static_cast<size_t>(linalg::Q8DepthwiseScratchSize(s));
  if (scratch.size() < need) scratch.resize(need);
  for (int64_t bc = p0; bc < p1;) {
    int64_t ch = bc % m, count = std::min(p1 - bc, m - ch);  // channels of one image
    if (finish != nullptr) count = std::min(count, kFinishRun);
    linalg::Q8DepthwiseRequant r;
    if (rq != nullptr) {
      r = *rq;
      r.scale += ch;
      if (r.bias != nullptr) r.bias += ch;
    }
    linalg::Q8Depthwise(s, count, x + bc * g.in_size, x_signed, x_zp, wc + ch * g.kernel_size,
                        rq != nullptr ? &r : nullptr, static_cast<uint8_t*>(out) + bc * g.out_size * out_elem_size,
                        scratch.data());
    if (finish != nullptr) (*finish)(bc, count);
    bc += count;
  }
}

void Depthwise2d(const ConvGeometry& g, const uint8_t* x, bool x_signed, int32_t x_zp, const int32_t* wc,
                 const linalg::Q8DepthwiseRequant* rq, void* out, size_t out_elem_size, ThreadPool* pool,
                 const std::function<void(int64_t, int64_t)>* finish) {
  const double cost = 2.0 * static_cast<double>(g.out_size * g.kernel_size);
  ThreadPool::For(pool, g.batch * g.out_channels, cost, [&](int64_t b0, int64_t b1) {
    DepthwisePlanes(g, x, x_signed, x_zp, wc, rq, out, out_elem_size, b0, b1, finish);
  });
}

namespace {

// Depthwise convolution in int32 (one input channel per output channel): acc[n, m, out...].
void DepthwiseInt32(const ConvGeometry& g, const uint8_t* x, bool x_signed, int32_t x_zp, const int32_t* wc,
                    int32_t* acc, ThreadPool* pool) {
  const size_t nd = g.in.size();
  ThreadPool::For(pool, g.batch * g.out_channels, 2.0 * static_cast<double>(g.out_size * g.kernel_size),
                  [&](int64_t b0, int64_t b1) {
                    std::vector<int64_t> base(nd), kofs(nd);
                    for (int64_t bc = b0; bc < b1; ++bc) {
                      const int64_t ch = bc % g.out_channels;
                      const uint8_t* xc = x + bc * g.in_size;
                      const int32_t* w = wc + ch * g.kernel_size;
                      for (int64_t p = 0; p < g.out_size; ++p) {
                        int64_t prem = p;
                        for (size_t d = nd; d-- > 0;) {
                          base[d] = (prem % g.out[d]) * g.stride[d] - g.pad_begin[d];
                          prem /= g.out[d];
                        }
                        uint32_t sum = 0;
                        for (int64_t r = 0; r < g.kernel_size; ++r) {
                          int64_t krem = r, offset = 0;
                          for (size_t d = nd; d-- > 0;) kofs[d] = (krem % g.kernel[d]) * g.dilation[d], krem /= g.kernel[d];
                          bool inside = true;
                          for (size_t d = 0; d < nd && inside; ++d) {
                            const int64_t pos = base[d] + kofs[d];
                            inside = pos >= 0 && pos < g.in[d];
                            offset = offset * g.in[d] + pos;
                          }
                          if (!inside) continue;  // padding is the zero point: contributes nothing
                          const int32_t v = x_signed ? static_cast<int8_t>(xc[offset]) : xc[offset];
                          sum += static_cast<uint32_t>((v - x_zp) * w[r]);
                        }
                        acc[bc * g.out_size + p] = static_cast<int32_t>(sum);
                      }
                    }
                  });
}

}  // namespace

void ConvInt8(KernelContext& ctx, const ConvGeometry& g, const uint8_t* xb, bool x_signed, int32_t x_zp,
              const QuantWeights& w, const linalg::Q8Output& out, size_t out_elem_size, int32_t* depthwise_acc) {
  ThreadPool* pool = ctx.thread_pool();
  const size_t nd = g.in.size();
  if (!w.depthwise.empty()) {
    if (nd == 2) {
      linalg::Q8DepthwiseRequant rq;
      rq.bias = out.bias_int, rq.scale = out.scale, rq.zero_point = out.zero_point, rq.out_signed = out.out_signed;
      Depthwise2d(g, xb, x_signed, x_zp, w.depthwise.data(), out.kind == linalg::Q8Output::kQuantized ? &rq : nullptr,
                  out.c, out_elem_size, pool);
    } else {
      DepthwiseInt32(g, xb, x_signed, x_zp, w.depthwise.data(), depthwise_acc, pool);
    }
    return;
  }
  if (!w.nchw.empty()) {
    ConvNchw(g, xb, x_signed, x_zp, w, out, out_elem_size, pool);
    return;
  }
  const int64_t cg = g.channels / g.group, mg = g.out_channels / g.group, depth = cg * g.kernel_size;
  const auto pad = static_cast<uint8_t>(x_zp);
  // A 1x1, stride-1, unpadded 2-D convolution reads the channels-last image itself.
  const bool pointwise = nd == 2 && g.kernel_size == 1 && g.stride[0] == 1 && g.stride[1] == 1 &&
                         g.pad_begin[0] == 0 && g.pad_begin[1] == 0 && g.out_size == g.in_size;
  std::vector<uint8_t> rows(pointwise ? 0 : static_cast<size_t>(std::min(kPixelTile, g.out_size) * depth));
  std::vector<uint8_t> xt(nd == 2 ? static_cast<size_t>(g.in_size * cg) : 0);
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t grp = 0; grp < g.group; ++grp) {
      const uint8_t* image = xb + (n * g.channels + grp * cg) * g.in_size;
      if (nd == 2) ToChannelsLast(image, cg, g.in_size, xt.data(), pool);
      for (int64_t p0 = 0; p0 < g.out_size; p0 += kPixelTile) {
        const int64_t count = std::min(kPixelTile, g.out_size - p0);
        const uint8_t* a = rows.data();
        if (pointwise) a = xt.data() + p0 * cg;
        else if (nd == 2) Im2RowHwc(g, xt.data(), p0, count, pad, rows.data(), pool);
        else Im2Row(g, xb + n * g.channels * g.in_size, grp, p0, count, pad, rows.data(), pool);
        linalg::Q8Output o = out;
        o.transposed = true;  // rows are pixels, columns channels: NCHW is C^T
        o.ldc = g.out_size;
        o.c = static_cast<uint8_t*>(out.c) + ((n * g.out_channels + grp * mg) * g.out_size + p0) * out_elem_size;
        if (o.scale_per_column) o.scale += grp * mg;
        if (o.bias_int != nullptr) o.bias_int += grp * mg;
        linalg::Q8Gemm(count, a, x_signed, depth, &x_zp, false, w.groups[static_cast<size_t>(grp)], o, pool);
      }
    }
}

namespace {

// What a channels-last kernel that has neither does after it: the table every output code is
// replaced by, and QLinearAdd's own row over the whole output, in place (element by element).
void LookupAndAdd(const ConvGeometry& g, const linalg::Q8Output& out, const uint8_t* lut,
                  const linalg::Q8ConvAddend* add) {
  const int64_t m = g.out_channels;
  if (lut != nullptr) {
    auto* y = static_cast<uint8_t*>(out.c);
    linalg::Q8Lookup(lut, y, g.batch * g.out_size * m, y);
  }
  if (add != nullptr) {
    auto* y = static_cast<uint8_t*>(out.c);
    const auto* r = static_cast<const uint8_t*>(add->other);
    const int64_t count = g.batch * g.out_size * m;
    const uint8_t* a = add->conv_is_a ? y : r;
    const uint8_t* b = add->conv_is_a ? r : y;
    if (out.out_signed)
      linalg::Q8AddS8(reinterpret_cast<const int8_t*>(a), add->ra, reinterpret_cast<const int8_t*>(b), 1, add->rb,
                      add->fixed, count, reinterpret_cast<int8_t*>(y));
    else
      linalg::Q8AddU8(a, add->ra, b, 1, add->rb, add->fixed, count, y);
  }
}

}  // namespace

void ConvNhwc(const ConvGeometry& g, const uint8_t* xb, bool x_signed, int32_t x_zp, const QuantWeights& w,
              const linalg::Q8Output& out, ThreadPool* pool, const uint8_t* lut,
              const linalg::Q8ConvAddend* add) {
  const int64_t c = g.channels, m = g.out_channels, depth = c * g.kernel_size;
  // The channels-last output from its pixel `first` on (images one after another): [pixels, M].
  auto output_from = [&](int64_t first) {
    linalg::Q8Output o = out;
    o.transposed = false;
    o.ldc = m;
    o.c = static_cast<uint8_t*>(out.c) + first * m;
    return o;
  };
  if (!w.depthwise_nhwc.empty()) {
    const linalg::Q8DepthwiseShape s = DepthwiseShapeOf(g);
    linalg::Q8DepthwiseRequant rq;
    rq.bias = out.bias_int, rq.scale = out.scale, rq.zero_point = out.zero_point, rq.out_signed = out.out_signed;
    linalg::Q8DepthwiseNhwc(w.depthwise_nhwc, s, g.batch, xb, x_signed, x_zp, rq, out.c, pool);
    LookupAndAdd(g, out, lut, add);
    return;
  }
  if (!w.direct.empty()) {  // the direct kernel reads the image in place
    linalg::Q8ConvNhwcShape s;
    s.channels = c, s.ih = g.in[0], s.iw = g.in[1], s.oh = g.out[0], s.ow = g.out[1];
    s.kh = g.kernel[0], s.kw = g.kernel[1], s.sy = g.stride[0], s.sx = g.stride[1];
    s.dy = g.dilation[0], s.dx = g.dilation[1], s.top = g.pad_begin[0], s.left = g.pad_begin[1];
    for (int64_t n = 0; n < g.batch; ++n) {
      linalg::Q8ConvAddend image_add;
      if (add != nullptr) {
        image_add = *add;
        image_add.other = static_cast<const uint8_t*>(add->other) + n * g.out_size * add->ldo;
      }
      linalg::Q8ConvNhwc(w.direct, s, xb + n * g.in_size * c, x_signed, x_zp, output_from(n * g.out_size), pool, lut,
                         add != nullptr ? &image_add : nullptr);
    }
    return;
  }
  const bool pointwise = g.kernel_size == 1 && g.stride[0] == 1 && g.stride[1] == 1 && g.pad_begin[0] == 0 &&
                         g.pad_begin[1] == 0 && g.out_size == g.in_size;
  // Kept per thread between calls: a fresh block of up to a few hundred KB each call came from
  // mmap, page faults included (as the other scratch buffers here).
  thread_local std::vector<uint8_t> rows;
  if (!pointwise && rows.size() < static_cast<size_t>(std::min(kPixelTile, g.out_size) * depth))
    rows.resize(static_cast<size_t>(std::min(kPixelTile, g.out_size) * depth));
  uint8_t* buffer = rows.data();  // the workers see this thread's buffer through the pointer
  const int64_t tile = pointwise ? g.out_size : kPixelTile;
  for (int64_t n = 0; n < g.batch; ++n) {
    const uint8_t* image = xb + n * g.in_size * c;
    for (int64_t p0 = 0; p0 < g.out_size; p0 += tile) {
      const int64_t count = std::min(tile, g.out_size - p0);
      const uint8_t* a = pointwise ? image : buffer;
      if (!pointwise) Im2RowHwc(g, image, p0, count, static_cast<uint8_t>(x_zp), buffer, pool);
      const linalg::Q8Output o = output_from(n * g.out_size + p0);
      linalg::Q8Gemm(count, a, x_signed, pointwise ? c : depth, &x_zp, false, w.groups[0], o, pool);
    }
  }
  LookupAndAdd(g, out, lut, add);
}

}  // namespace quant_conv
}  // namespace onyx
