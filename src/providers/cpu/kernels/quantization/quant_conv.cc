// ConvInteger and QLinearConv (opset 10): N-d grouped convolution of uint8/int8 data with
// zero points, accumulated exactly in int32 on the int8 GEMM (rows of im2col^T x the packed
// weights, written back as NCHW) or, depthwise, a direct loop. Padding is the zero point, so it
// contributes nothing. QLinearConv adds the int32 bias and
// requantizes with x_scale * w_scale / y_scale (w_scale / w_zero_point per output channel or
// per tensor). Also com.onyx DynamicQuantizeConv, quantize_dynamic's Conv as one node.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "base/int_math.h"
#include "linalg/q8_conv_nhwc.h"
#include "linalg/q8_conv_w.h"
#include "linalg/q8_dwconv.h"
#include "linalg/q8_gemm.h"
#include "linalg/q8_lut.h"
#include "linalg/q8_quantize.h"
#include "linalg/q8_to_float.h"
#include "platform/thread_pool.h"
#include "providers/cpu/kernels/cast/element_convert.h"
#include "providers/cpu/kernels/quantization/quant_common.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

struct ConvAttrs {
  std::string auto_pad = "NOTSET";
  std::vector<int64_t> dilations, kernel_shape, pads, strides;
  int64_t group = 1;
};

ConvAttrs ReadConvAttrs(const KernelInfo& info) {
  ConvAttrs a;
  a.auto_pad = info.GetStringOr("auto_pad", "NOTSET");
  if (a.auto_pad != "NOTSET" && a.auto_pad != "VALID" && a.auto_pad != "SAME_UPPER" && a.auto_pad != "SAME_LOWER")
    info.Fail("auto_pad must be NOTSET, VALID, SAME_UPPER or SAME_LOWER, not " + a.auto_pad);
  a.dilations = info.GetIntsOr("dilations", {});
  a.kernel_shape = info.GetIntsOr("kernel_shape", {});
  a.pads = info.GetIntsOr("pads", {});
  a.strides = info.GetIntsOr("strides", {});
  a.group = info.GetIntOr("group", 1);
  if (a.group < 1) info.Fail(StrCat("group must be positive, not ", a.group));
  for (int64_t v : a.dilations)
    if (v < 1) info.Fail("dilations must be positive");
  for (int64_t v : a.strides)
    if (v < 1) info.Fail("strides must be positive");
  for (int64_t v : a.pads)
    if (v < 0) info.Fail("pads must not be negative");
  return a;
}

// The geometry of one convolution call.
struct ConvGeometry {
  int64_t batch = 0, channels = 0, out_channels = 0, group = 1;
  std::vector<int64_t> in, kernel, out, stride, dilation, pad_begin;
  int64_t in_size = 1, kernel_size = 1, out_size = 1;
};

// channels_last: x is [N, spatial..., C] (com.microsoft.QLinearConv's channels_last).
ConvGeometry ResolveConv(KernelContext& ctx, const ConvAttrs& attrs, const Tensor& x, const Tensor& w,
                         bool channels_last = false) {
  if (x.rank() < 3) ctx.Fail(StrCat("input must have rank >= 3 (N, C, spatial...), not ", x.Describe()));
  if (w.rank() != x.rank()) ctx.Fail(StrCat("weight rank ", w.rank(), " differs from input rank ", x.rank()));
  const size_t nd = x.rank() - 2;
  Shape xs = x.shape();
  if (channels_last) std::rotate(xs.begin() + 1, xs.end() - 1, xs.end());  // as [N, C, spatial...]
  ConvGeometry g;
  g.batch = xs[0];
  g.channels = xs[1];
  g.out_channels = w.dim(0);
  g.group = attrs.group;
  if (g.channels % g.group != 0 || g.out_channels % g.group != 0 || w.dim(1) * g.group != g.channels)
    ctx.Fail(StrCat("channels do not match: input ", x.Describe(), ", weight ", w.Describe(), ", group ", g.group));
  auto per_dim = [&](const std::vector<int64_t>& v, const char* name, int64_t fallback) {
    if (v.empty()) return std::vector<int64_t>(nd, fallback);
    if (v.size() != nd) ctx.Fail(StrCat(name, " has ", v.size(), " values for ", nd, " spatial dims"));
    return v;
  };
  g.kernel = std::vector<int64_t>(w.shape().begin() + 2, w.shape().end());
  if (!attrs.kernel_shape.empty() && attrs.kernel_shape != g.kernel)
    ctx.Fail(StrCat("kernel_shape does not match the weight ", w.Describe()));
  g.stride = per_dim(attrs.strides, "strides", 1);
  g.dilation = per_dim(attrs.dilations, "dilations", 1);
  std::vector<int64_t> pads = attrs.pads;
  if (pads.empty()) pads.assign(2 * nd, 0);
  if (pads.size() != 2 * nd) ctx.Fail(StrCat("pads has ", pads.size(), " values for ", nd, " spatial dims"));
  g.in.assign(xs.begin() + 2, xs.end());
  g.out.resize(nd);
  g.pad_begin.resize(nd);
  for (size_t d = 0; d < nd; ++d) {
    const int64_t extent = (g.kernel[d] - 1) * g.dilation[d] + 1;
    int64_t begin = pads[d], end = pads[d + nd];
    if (attrs.auto_pad == "VALID") {
      begin = end = 0;
    } else if (attrs.auto_pad != "NOTSET") {
      // ceil(in / stride) without overflow at huge strides
      const int64_t out = g.in[d] / g.stride[d] + (g.in[d] % g.stride[d] != 0 ? 1 : 0);
      const int64_t total = std::max<int64_t>(0, (out - 1) * g.stride[d] + extent - g.in[d]);
      begin = attrs.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      end = total - begin;
    }
    const int64_t span = g.in[d] + begin + end - extent;
    if (span < 0) ctx.Fail(StrCat("the kernel (", extent, " with dilation) is larger than padded spatial dim ", d));
    g.out[d] = span / g.stride[d] + 1;
    g.pad_begin[d] = begin;
    g.in_size *= g.in[d];
    g.kernel_size *= g.kernel[d];
    g.out_size *= g.out[d];
  }
  return g;
}

bool IsInt8Type(DataType t) { return t == DataType::kInt8 || t == DataType::kUInt8; }

// Zero point (or scale) of output channel `m`: per tensor or per channel.
double PerChannel(const std::vector<double>& v, int64_t m) { return v.size() == 1 ? v[0] : v[static_cast<size_t>(m)]; }

void CheckPerChannel(KernelContext& ctx, const char* what, const Tensor* t, int64_t channels) {
  if (t != nullptr && t->size() != 1 && !(t->rank() == 1 && t->dim(0) == channels))
    ctx.Fail(StrCat(what, " must be a scalar or have one value per output channel (", channels, "), not ",
                    t->Describe()));
}

// Output pixels per im2col tile: bounds the scratch (pixels x C/group x kernel bytes).
constexpr int64_t kPixelTile = 1024;

// The prepared weights: for a 2-D or 1-D convolution where the int8 GEMM has the weight-stationary
// kernel (q8_gemm.h's Q8GemmW, AVX-512 VNNI), one packed W_group [M/group, C/group * kernel] per
// group, run over the NCHW image (pointwise) or its implicit im2col (q8_conv_w.h); otherwise one packed int8
// GEMM operand per group (B = W_group^T, [C/group * kernel, M/group], zero points per output
// channel) run over channels-last rows; for a depthwise convolution (one input and one output
// channel per group) the weights minus their zero points.
struct QuantWeights {
  std::vector<linalg::PackedQ8W> nchw;
  std::vector<linalg::PackedQ8B> groups;
  std::vector<int32_t> depthwise;  // [M, kernel]
  linalg::PackedQ8Nhwc direct;     // channels_last, symmetric weights, AVX-512 VNNI (q8_conv_nhwc.h)
  bool empty() const { return nchw.empty() && groups.empty() && depthwise.empty() && direct.empty(); }
};

bool IsDepthwise(int64_t channels, int64_t out_channels, int64_t group) {
  return group > 1 && group == channels && group == out_channels;
}

// channels_last: always the GEMM operand (ConvNhwc's B), group 1.
QuantWeights PrepareWeights(const Tensor& w, const std::vector<int64_t>& w_zp, int64_t group, ThreadPool* pool,
                            bool channels_last = false) {
  QuantWeights q;
  const int64_t m = w.dim(0), per = m == 0 ? 0 : w.size() / m, mg = m / group;
  auto zp = [&](int64_t ch) { return static_cast<int32_t>(w_zp.size() == 1 ? w_zp[0] : w_zp[static_cast<size_t>(ch)]); };
  const bool is_signed = w.dtype() == DataType::kInt8;
  const auto* bytes = static_cast<const uint8_t*>(w.raw_data());
  if (!channels_last && IsDepthwise(w.dim(1) * group, m, group)) {
    q.depthwise.resize(static_cast<size_t>(m * per));
    for (int64_t ch = 0; ch < m; ++ch)
      for (int64_t r = 0; r < per; ++r) {
        const uint8_t v = bytes[ch * per + r];
        q.depthwise[static_cast<size_t>(ch * per + r)] = (is_signed ? static_cast<int8_t>(v) : v) - zp(ch);
      }
    return q;
  }
  if (!channels_last && (w.rank() == 4 || w.rank() == 3) && linalg::Q8GemmWAvailable()) {  // 2-D, or 1-D as one image row
    for (int64_t g = 0; g < group; ++g) {
      std::vector<int32_t> zps(static_cast<size_t>(mg));
      for (int64_t j = 0; j < mg; ++j) zps[static_cast<size_t>(j)] = zp(g * mg + j);
      q.nchw.emplace_back(mg, per, bytes + g * mg * per, is_signed, zps.data(), true);
    }
    return q;
  }
  if (channels_last && w.rank() == 4 && group == 1 && linalg::Q8ConvNhwcAvailable()) {
    std::vector<int32_t> zps(static_cast<size_t>(m));
    for (int64_t j = 0; j < m; ++j) zps[static_cast<size_t>(j)] = zp(j);
    q.direct = linalg::PackedQ8Nhwc(m, w.dim(1), w.dim(2), w.dim(3), bytes, is_signed, zps.data(), true);
    if (!q.direct.empty()) return q;  // else (asymmetric weights, C % 4 != 0) the GEMM below
  }
  // 2-D weights go channels-last, [M, kh, kw, C/group], the order of Im2RowHwc's rows.
  std::vector<uint8_t> reordered;
  if (w.rank() == 4) {
    const int64_t cg = w.dim(1), ks = w.dim(2) * w.dim(3);
    reordered.resize(static_cast<size_t>(w.size()));
    for (int64_t ch = 0; ch < m; ++ch)
      for (int64_t c = 0; c < cg; ++c)
        for (int64_t r = 0; r < ks; ++r) reordered[static_cast<size_t>((ch * ks + r) * cg + c)] = bytes[(ch * cg + c) * ks + r];
    bytes = reordered.data();
  }
  for (int64_t g = 0; g < group; ++g) {
    std::vector<int32_t> zps(static_cast<size_t>(mg));
    for (int64_t j = 0; j < mg; ++j) zps[static_cast<size_t>(j)] = zp(g * mg + j);
    q.groups.emplace_back(true, per, mg, bytes + g * mg * per, is_signed, per, zps.data(), true, pool);
  }
  return q;
}

// Prepared at session creation when w and its zero point are constants.
QuantWeights PrepackWeights(const KernelInfo& info, size_t w_index, size_t zp_index, int64_t group,
                            bool channels_last = false) {
  const Tensor* w = info.ConstantInput(w_index);
  const Tensor* zp = info.has_input(zp_index) ? info.ConstantInput(zp_index) : nullptr;
  if (w == nullptr || w->rank() < 3 || (info.has_input(zp_index) && zp == nullptr) || w->dim(0) % group != 0) return {};
  if (!IsInt8Type(w->dtype()) || (zp && (zp->dtype() != w->dtype() || (zp->size() != 1 && zp->size() != w->dim(0)))))
    return {};  // Compute reports the error
  if (channels_last && (w->rank() != 4 || group != 1)) return {};  // Compute reports the error
  return PrepareWeights(*w, zp ? AllAsInt64s(*zp) : std::vector<int64_t>{0}, group, info.thread_pool(), channels_last);
}

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

// Channels [c0, c0 + count) of one image, transposed to pixels x channels (channels-last).
void ToChannelsLast(const uint8_t* x, int64_t count, int64_t pixels, uint8_t* out, ThreadPool* pool) {
  constexpr int64_t kBlock = 64;  // pixels a block: the reads stream `count` rows at once
  ThreadPool::For(pool, CeilDiv(pixels, kBlock), 2.0 * static_cast<double>(kBlock * count), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t p0 = b * kBlock, p1 = std::min(pixels, p0 + kBlock);
      for (int64_t c = 0; c < count; ++c) {
        const uint8_t* src = x + c * pixels;
        for (int64_t p = p0; p < p1; ++p) out[p * count + c] = src[p];
      }
    }
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

// A 2-D depthwise convolution on linalg's per-ISA loop (q8_dwconv.h), a run of channels of one
// image at a time; int32 into out, or requantized with rq (scale and bias per output channel).
// `finish` (optional, int32 output only) is called on each run of at most kFinishRun channels
// right after they are computed, while their planes are still in cache.
constexpr int64_t kFinishRun = 8;
void Depthwise2d(const ConvGeometry& g, const uint8_t* x, bool x_signed, int32_t x_zp, const int32_t* wc,
                 const linalg::Q8DepthwiseRequant* rq, void* out, size_t out_elem_size, ThreadPool* pool,
                 const std::function<void(int64_t, int64_t)>* finish = nullptr) {
  linalg::Q8DepthwiseShape s;
  s.ih = g.in[0], s.iw = g.in[1], s.oh = g.out[0], s.ow = g.out[1], s.kh = g.kernel[0], s.kw = g.kernel[1];
  s.sy = g.stride[0], s.sx = g.stride[1], s.dy = g.dilation[0], s.dx = g.dilation[1];
  s.top = g.pad_begin[0], s.left = g.pad_begin[1];
  const int64_t m = g.out_channels;
  const double cost = 2.0 * static_cast<double>(g.out_size * g.kernel_size);
  ThreadPool::For(pool, g.batch * m, cost, [&](int64_t b0, int64_t b1) {
    // Per-thread, grown on demand and kept for later calls: a fresh zeroed block of a few hundred
    // KB each call came from mmap (page faults) and its zeroing; Q8Depthwise needs no zeros.
    thread_local std::vector<int32_t> scratch;
    const auto need = static_cast<size_t>(linalg::Q8DepthwiseScratchSize(s));
    if (scratch.size() < need) scratch.resize(need);
    for (int64_t bc = b0; bc < b1;) {
      int64_t ch = bc % m, count = std::min(b1 - bc, m - ch);  // channels of one image
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
  });
}

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

// The convolution through the int8 GEMM (or the depthwise loops). `out` says what to write;
// its c points at y. The 2-D depthwise path requantizes as `out` says; in other ranks the
// depthwise int32 result goes to `depthwise_acc` and the caller finishes it.
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

// A 2-D convolution (group 1) of channels-last images on the int8 GEMM (com.microsoft.QLinearConv,
// channels_last): rows of A are output pixels and C [pixels, M] is the channels-last output
// itself. A pointwise conv reads the image as A (K = C contiguous: nothing gathered); others
// gather im2col rows of whole C-code runs (Im2RowHwc), a tile of pixels at a time. lut: null, or
// 256 codes every output code is replaced by (com.onyx.QLinearConvSiLU's SiLU). add: null, or a
// QLinearAdd of another [pixels, M] image the output is summed with (com.onyx.QLinearConvAdd).
void ConvNhwc(const ConvGeometry& g, const uint8_t* xb, bool x_signed, int32_t x_zp, const QuantWeights& w,
              const linalg::Q8Output& out, ThreadPool* pool, const uint8_t* lut = nullptr,
              const linalg::Q8ConvAddend* add = nullptr) {
  const int64_t c = g.channels, m = g.out_channels, depth = c * g.kernel_size;
  // The channels-last output from its pixel `first` on (images one after another): [pixels, M].
  auto output_from = [&](int64_t first) {
    linalg::Q8Output o = out;
    o.transposed = false;
    o.ldc = m;
    o.c = static_cast<uint8_t*>(out.c) + first * m;
    return o;
  };
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
  if (lut != nullptr) {
    auto* y = static_cast<uint8_t*>(out.c);
    linalg::Q8Lookup(lut, y, g.batch * g.out_size * m, y);
  }
  if (add != nullptr) {  // QLinearAdd's own row over the whole output, in place (element by element)
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

Shape OutputShape(const ConvGeometry& g) {
  Shape s{g.batch, g.out_channels};
  s.insert(s.end(), g.out.begin(), g.out.end());
  return s;
}

// The weights for this call: the prepared ones, or prepared now from a non-constant w.
const QuantWeights& WeightsFor(const QuantWeights& prepared, const Tensor& w, const Tensor* w_zp, int64_t group,
                               ThreadPool* pool, QuantWeights& scratch, bool channels_last = false) {
  if (!prepared.empty()) return prepared;
  scratch = PrepareWeights(w, w_zp ? AllAsInt64s(*w_zp) : std::vector<int64_t>{0}, group, pool, channels_last);
  return scratch;
}

class ConvInteger final : public OpKernel {
 public:
  explicit ConvInteger(const KernelInfo& info)
      : attrs_(ReadConvAttrs(info)), packed_w_(PrepackWeights(info, 1, 3, attrs_.group)) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& w = ctx.required_input(1);
    const Tensor* x_zp = ctx.input(2);
    const Tensor* w_zp = ctx.input(3);
    if (!IsInt8Type(x.dtype()) || !IsInt8Type(w.dtype()))
      ctx.Fail(StrCat("x and w must be int8 or uint8, not ", DataTypeName(x.dtype()), " and ", DataTypeName(w.dtype())));
    if ((x_zp && x_zp->dtype() != x.dtype()) || (w_zp && w_zp->dtype() != w.dtype()))
      ctx.Fail("a zero point's type differs from its operand's");
    if (x_zp && x_zp->size() != 1) ctx.Fail(StrCat("x_zero_point must be a scalar, not ", x_zp->Describe()));
    const ConvGeometry g = ResolveConv(ctx, attrs_, x, w);
    CheckPerChannel(ctx, "w_zero_point", w_zp, g.out_channels);
    const auto xz = static_cast<int32_t>(x_zp ? AllAsInt64s(*x_zp)[0] : 0);
    Tensor& y = ctx.AllocateOutput(0, DataType::kInt32, OutputShape(g));
    if (y.size() == 0) return;
    QuantWeights scratch;
    const QuantWeights& qw = WeightsFor(packed_w_, w, w_zp, g.group, ctx.thread_pool(), scratch);
    linalg::Q8Output out;
    out.c = y.raw_data();
    ConvInt8(ctx, g, static_cast<const uint8_t*>(x.raw_data()), x.dtype() == DataType::kInt8, xz, qw, out,
             sizeof(int32_t), y.data<int32_t>());
  }

 private:
  ConvAttrs attrs_;
  QuantWeights packed_w_;
};

// Also com.microsoft.QLinearConv (MsQLinearConv), whose channels_last = 1 reads X and writes Y
// as [N, H, W, C] (2-D, group 1: what the optimizer's QdqNhwcLayout makes).
class QLinearConv : public OpKernel {
 public:
  explicit QLinearConv(const KernelInfo& info, bool channels_last = false)
      : attrs_(ReadConvAttrs(info)),
        channels_last_(channels_last),
        packed_w_(PrepackWeights(info, 3, 5, attrs_.group, channels_last)) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& x_scale = ctx.required_input(1);
    const Tensor& x_zp = ctx.required_input(2);
    const Tensor& w = ctx.required_input(3);
    const Tensor& w_scale = ctx.required_input(4);
    const Tensor& w_zp = ctx.required_input(5);
    const Tensor& y_scale = ctx.required_input(6);
    const Tensor& y_zp = ctx.required_input(7);
    const Tensor* bias = ctx.input(8);
    if (!IsInt8Type(x.dtype()) || !IsInt8Type(w.dtype()) || !IsInt8Type(y_zp.dtype()))
      ctx.Fail(StrCat("x, w and y must be int8 or uint8, not ", DataTypeName(x.dtype()), ", ", DataTypeName(w.dtype()),
                      " and ", DataTypeName(y_zp.dtype())));
    if (x_zp.dtype() != x.dtype() || w_zp.dtype() != w.dtype())
      ctx.Fail("a zero point's type differs from its operand's");
    if (x_scale.dtype() != DataType::kFloat || w_scale.dtype() != DataType::kFloat || y_scale.dtype() != DataType::kFloat)
      ctx.Fail("scales must be float");
    if (x_scale.size() != 1 || x_zp.size() != 1 || y_scale.size() != 1 || y_zp.size() != 1)
      ctx.Fail("x_scale, x_zero_point, y_scale and y_zero_point must be scalars");
    if (channels_last_ && (x.rank() != 4 || attrs_.group != 1))
      ctx.Fail(StrCat("channels_last supports 2-D convolutions with group 1 only, not input ", x.Describe(),
                      " with group ", attrs_.group));
    const ConvGeometry g = ResolveConv(ctx, attrs_, x, w, channels_last_);
    CheckPerChannel(ctx, "w_scale", &w_scale, g.out_channels);
    CheckPerChannel(ctx, "w_zero_point", &w_zp, g.out_channels);
    if (bias && (bias->dtype() != DataType::kInt32 || bias->rank() != 1 || bias->dim(0) != g.out_channels))
      ctx.Fail(StrCat("B must be int32 with one value per output channel (", g.out_channels, "), not ",
                      bias->Describe()));
    const std::vector<double> ws = AllAsDoubles(w_scale);
    const auto xs = static_cast<float>(AllAsDoubles(x_scale)[0]);
    const auto ys = static_cast<float>(AllAsDoubles(y_scale)[0]);
    const auto yz = static_cast<int32_t>(AllAsInt64s(y_zp)[0]);
    Shape y_shape = OutputShape(g);
    if (channels_last_) std::rotate(y_shape.begin() + 1, y_shape.begin() + 2, y_shape.end());  // [N, H, W, M]
    Tensor& y = ctx.AllocateOutput(0, y_zp.dtype(), y_shape);
    if (y.size() == 0) return;
    // The multiplier in float, in the order ONNX Runtime computes it.
    std::vector<float> mult(static_cast<size_t>(g.out_channels));
    for (int64_t m = 0; m < g.out_channels; ++m)
      mult[static_cast<size_t>(m)] = xs * static_cast<float>(PerChannel(ws, m)) / ys;
    linalg::Q8Output out;
    out.kind = linalg::Q8Output::kQuantized;
    out.c = y.raw_data();
    out.scale = mult.data();
    out.scale_per_column = true;
    out.bias_int = bias != nullptr ? bias->data<int32_t>() : nullptr;
    out.zero_point = yz;
    out.out_signed = y.dtype() == DataType::kInt8;
    QuantWeights scratch;
    const QuantWeights& qw = WeightsFor(packed_w_, w, &w_zp, g.group, ctx.thread_pool(), scratch, channels_last_);
    if (channels_last_) {
      uint8_t local[256];
      linalg::Q8ConvAddend add;
      const bool adds = Addend(ctx, y, ys, yz, add);
      ConvNhwc(g, static_cast<const uint8_t*>(x.raw_data()), x.dtype() == DataType::kInt8,
               static_cast<int32_t>(AllAsInt64s(x_zp)[0]), qw, out, ctx.thread_pool(), Lut(ctx, local),
               adds ? &add : nullptr);
      return;
    }
    // Depthwise in other ranks than 2-D: the int32 result, requantized below.
    const bool depthwise_int32 = !qw.depthwise.empty() && g.in.size() != 2;
    std::vector<int32_t> acc(depthwise_int32 ? static_cast<size_t>(y.size()) : 0);
    ConvInt8(ctx, g, static_cast<const uint8_t*>(x.raw_data()), x.dtype() == DataType::kInt8,
             static_cast<int32_t>(AllAsInt64s(x_zp)[0]), qw, out, 1, acc.data());
    if (acc.empty()) return;
    // The N-d depthwise path's int32 result, requantized as the GEMM's output stage does it.
    auto* yb = static_cast<uint8_t*>(y.raw_data());
    ThreadPool::For(ctx.thread_pool(), g.batch * g.out_channels, 4.0 * static_cast<double>(g.out_size),
                    [&](int64_t b0, int64_t b1) {
                      for (int64_t nm = b0; nm < b1; ++nm) {
                        const int64_t m = nm % g.out_channels;
                        linalg::Q8Requantize(acc.data() + nm * g.out_size, g.out_size,
                                             bias != nullptr ? out.bias_int[m] : 0, mult[static_cast<size_t>(m)], yz,
                                             out.out_signed, yb + nm * g.out_size);
                      }
                    });
  }

 private:
  ConvAttrs attrs_;
  bool channels_last_;
  QuantWeights packed_w_;

 protected:
  // channels_last: a table every output code is replaced by (into `local` when made here), or null.
  virtual const uint8_t* Lut(KernelContext&, uint8_t* /*local*/) const { return nullptr; }
  // channels_last: whether the output is summed with another image (`add`, for output y, whose
  // conv codes have scale ys and zero point yz).
  virtual bool Addend(KernelContext&, const Tensor& /*y*/, float /*ys*/, int32_t /*yz*/,
                      linalg::Q8ConvAddend& /*add*/) const {
    return false;
  }
};

class MsQLinearConv final : public QLinearConv {
 public:
  explicit MsQLinearConv(const KernelInfo& info) : QLinearConv(info, info.GetIntOr("channels_last", 0) != 0) {}
};

// com.onyx.QLinearConvSiLU(X, x_scale, x_zp, W, w_scale, w_zp, y_scale, y_zp, B, s_scale, s_zp,
// z_scale, z_zp), channels_last = 1 only: com.microsoft.QLinearConv into (y_scale, y_zp), then
// com.onyx.QLinearSiLU of that with the Sigmoid's (s_scale, s_zp) into (z_scale, z_zp) - what the
// optimizer's QLinearConvSiluFusion makes of a channels-last conv and its SiLU. The SiLU is a
// 256-entry table (linalg::Q8SiluTable) each requantized code is looked up in before it is stored.
class QLinearConvSiLU final : public QLinearConv {
 public:
  explicit QLinearConvSiLU(const KernelInfo& info) : QLinearConv(info, info.GetIntOr("channels_last", 0) != 0) {
    if (info.GetIntOr("channels_last", 0) == 0) info.Fail("supports channels_last = 1 only");
    if (info.num_inputs() != 13)
      info.Fail("inputs must be QLinearConv's 9 (B may be empty), then s_scale, s_zero_point, z_scale, z_zero_point");
    std::vector<const Tensor*> params;
    for (size_t i : {6, 7, 9, 10, 11, 12}) params.push_back(info.ConstantInput(i));
    if (std::all_of(params.begin(), params.end(), [](const Tensor* t) { return t != nullptr; }) &&
        MakeTable(params, table_, nullptr))
      constant_ = true;
  }

 protected:
  const uint8_t* Lut(KernelContext& ctx, uint8_t* local) const override {
    if (constant_) return table_;
    std::vector<const Tensor*> params;
    for (size_t i : {6, 7, 9, 10, 11, 12}) params.push_back(ctx.input(i));
    std::string error;
    if (!MakeTable(params, local, &error)) ctx.Fail(error);
    return local;
  }

 private:
  // params: y_scale, y_zp, s_scale, s_zp, z_scale, z_zp (null: absent).
  static bool MakeTable(const std::vector<const Tensor*>& params, uint8_t* table, std::string* error) {
    static const char* kNames[] = {"y_scale", "y_zero_point", "s_scale", "s_zero_point", "z_scale", "z_zero_point"};
    const Tensor* yz = params[1];
    for (size_t k = 0; k < 6; ++k) {
      const Tensor* t = params[k];
      const bool scale = k % 2 == 0;
      const bool ok = t != nullptr && t->size() == 1 &&
                      (scale ? t->dtype() == DataType::kFloat : yz != nullptr && t->dtype() == yz->dtype() && IsInt8Type(t->dtype()));
      if (!ok) {
        if (error) *error = StrCat("input '", kNames[k], "' must be a ", scale ? "float scalar" : "scalar of y_zero_point's type (uint8 or int8)");
        return false;
      }
    }
    const bool is_signed = yz->dtype() == DataType::kInt8;
    auto zp = [&](size_t k) { return is_signed ? int32_t{params[k]->data<int8_t>()[0]} : int32_t{params[k]->data<uint8_t>()[0]}; };
    linalg::Q8SiluTable(is_signed, params[0]->data<float>()[0], zp(1), params[2]->data<float>()[0], zp(3),
                        params[4]->data<float>()[0], zp(5), table);
    return true;
  }

  uint8_t table_[256] = {};
  bool constant_ = false;
};

// com.onyx.QLinearConvAdd(X, x_scale, x_zp, W, w_scale, w_zp, y_scale, y_zp, B, R, r_scale,
// r_zp, c_scale, c_zp), attribute conv_input (0 or 1), channels_last = 1 only:
// com.microsoft.QLinearConv into (y_scale, y_zp), then com.microsoft.QLinearAdd of that and R (R
// its input B when conv_input = 0, its input A when 1) into (c_scale, c_zp) - what the optimizer's
// QLinearConvAddFusion makes of a channels-last conv and the residual add reading it. R has Y's
// shape and type; the zero points r_zp and c_zp may be absent (0).
class QLinearConvAdd final : public QLinearConv {
 public:
  explicit QLinearConvAdd(const KernelInfo& info)
      : QLinearConv(info, info.GetIntOr("channels_last", 0) != 0), conv_input_(info.GetIntOr("conv_input", 0)) {
    if (info.GetIntOr("channels_last", 0) == 0) info.Fail("supports channels_last = 1 only");
    if (conv_input_ != 0 && conv_input_ != 1) info.Fail("conv_input must be 0 or 1");
    if (info.num_inputs() < 13 || info.num_inputs() > 14)
      info.Fail("inputs must be QLinearConv's 9 (B may be empty), then R, r_scale, r_zero_point, c_scale[, c_zero_point]");
  }

 protected:
  bool Addend(KernelContext& ctx, const Tensor& y, float ys, int32_t yz, linalg::Q8ConvAddend& add) const override {
    const Tensor& r = ctx.required_input(9);
    if (r.dtype() != y.dtype() || r.shape() != y.shape())
      ctx.Fail(StrCat("R must have Y's type and shape ", y.Describe(), ", not ", r.Describe()));
    const float rs = Scale(ctx, 10, "r_scale"), cs = Scale(ctx, 12, "c_scale");
    const int32_t rz = Zero(ctx, 11, y.dtype(), "r_zero_point"), cz = Zero(ctx, 13, y.dtype(), "c_zero_point");
    // QLinearAdd's ratios and fixed part, as its kernel computes them from its A and B.
    const bool conv_is_a = conv_input_ == 0;
    const float sa = conv_is_a ? ys : rs, sb = conv_is_a ? rs : ys;
    const int32_t za = conv_is_a ? yz : rz, zb = conv_is_a ? rz : yz;
    const float rac = sa / cs, rbc = sb / cs;
    add.fixed = QLinearAddFixedPart(rac, za, rbc, zb, cz);
    add.ra = rac, add.rb = rbc, add.conv_is_a = conv_is_a;
    add.other = r.raw_data();
    add.ldo = y.dim(3);
    return true;
  }

 private:
  static float Scale(KernelContext& ctx, size_t i, const char* name) {
    const Tensor& t = ctx.required_input(i);
    if (t.dtype() != DataType::kFloat || t.size() != 1) ctx.Fail(StrCat("input '", name, "' must be a float scalar"));
    return t.data<float>()[0];
  }
  static int32_t Zero(KernelContext& ctx, size_t i, DataType dt, const char* name) {
    const Tensor* t = ctx.input(i);
    if (t == nullptr) return 0;
    if (t->dtype() != dt || t->size() != 1) ctx.Fail(StrCat("input '", name, "' must be a scalar of Y's type"));
    return dt == DataType::kUInt8 ? int32_t{t->data<uint8_t>()[0]} : int32_t{t->data<int8_t>()[0]};
  }

  int64_t conv_input_;
};

// com.onyx DynamicQuantizeConv(X, W, w_scale, w_zero_point?, B?), Conv's attributes: what
// onnxruntime.quantization.quantize_dynamic writes for a Conv as one node (the optimizer's
// QdqDynamicConvFusion makes it):
//   (q, s, z) = DynamicQuantizeLinear(X)
//   Y = Cast<float>(ConvInteger(q, W, z, w_zero_point)) * (s * w_scale) + B
// X is quantized here as Onyx's DynamicQuantizeLinear does it, the int32 result is written into
// Y's buffer and turned into float in place, plane by plane, with the graph's float operations
// in its order (a product, then a sum, each rounded: linalg/q8_to_float.h), so the
// node equals the unfused graph bit for bit. w_scale and B: one value, or one per output channel.
// A Relu or Clip that follows may be fused too (attribute activation), compared as they compare.
// Optional output 1, Y_range (float [2]): [min(0, Y), max(0, Y)], NaNs skipped, taken while Y is
// written; optional input 5, X_range: that of X, from X's producer, in place of the pass over X
// (QdqDynamicConvFusion links a DynamicQuantizeConv read only by others so).
class DynamicQuantizeConv final : public OpKernel {
 public:
  explicit DynamicQuantizeConv(const KernelInfo& info)
      : attrs_(ReadConvAttrs(info)), packed_w_(PrepackWeights(info, 1, 3, attrs_.group)) {
    // A following Relu or Clip: activation "Relu", or "Clip" with activation_params [min, max].
    const std::string act = info.GetStringOr("activation", "");
    if (act == "Relu") {
      lo_ = 0.0f;
    } else if (act == "Clip") {
      const std::vector<float> p = info.GetFloatsOr("activation_params", {});
      if (p.size() != 2) info.Fail("activation Clip needs activation_params [min, max]");
      lo_ = p[0], hi_ = p[1];
    } else if (!act.empty()) {
      info.Fail("activation must be Relu or Clip, not " + act);
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& w = ctx.required_input(1);
    const Tensor& w_scale = ctx.required_input(2);
    const Tensor* w_zp = ctx.input(3);
    const Tensor* bias = ctx.input(4);
    if (x.dtype() != DataType::kFloat) ctx.Fail(StrCat("X must be float, not ", DataTypeName(x.dtype())));
    if (!IsInt8Type(w.dtype())) ctx.Fail(StrCat("W must be int8 or uint8, not ", DataTypeName(w.dtype())));
    if (w_zp && w_zp->dtype() != w.dtype()) ctx.Fail("w_zero_point's type differs from W's");
    if (w_scale.dtype() != DataType::kFloat) ctx.Fail(StrCat("w_scale must be float, not ", w_scale.Describe()));
    const ConvGeometry g = ResolveConv(ctx, attrs_, x, w);
    const int64_t m = g.out_channels;
    CheckPerChannel(ctx, "w_zero_point", w_zp, m);
    if (w_scale.size() != 1 && w_scale.size() != m)
      ctx.Fail(StrCat("w_scale must have 1 or ", m, " values, not ", w_scale.Describe()));
    if (bias && (bias->dtype() != DataType::kFloat || (bias->size() != 1 && bias->size() != m)))
      ctx.Fail(StrCat("B must be float with 1 or ", m, " values, not ", bias->Describe()));
    const Tensor* x_range = ctx.input(5);
    if (x_range != nullptr && (x_range->dtype() != DataType::kFloat || x_range->size() != 2))
      ctx.Fail(StrCat("X_range must be float with 2 values, not ", x_range->Describe()));
    Tensor& y = ctx.AllocateOutput(0, DataType::kFloat, OutputShape(g));
    // Y's range (min and max with 0, NaN skipped) for the next DynamicQuantizeConv, taken while Y
    // is written: {0, 0} until then.
    float y_range[2] = {0.0f, 0.0f};
    const bool want_range = ctx.has_output(1);
    auto write_range = [&] {
      if (!want_range) return;
      float* r = ctx.AllocateOutput(1, DataType::kFloat, Shape{2}).data<float>();
      r[0] = y_range[0], r[1] = y_range[1];
    };
    if (y.size() == 0) return write_range();
    ThreadPool* pool = ctx.thread_pool();
    // DynamicQuantizeLinear (quantize_linear.cc's kernel, step by step): the range with 0, its
    // scale and zero point in float, then the codes. Min and max are the same in any split.
    // X_range, when given, is that range as X's producer took it (QdqDynamicConvFusion links the
    // two nodes), so no pass over X: it must hold min(0, X) and max(0, X).
    const float* xd = x.data<float>();
    const int64_t size = x.size();
    constexpr int64_t kChunk = 16384;
    const int64_t chunks = CeilDiv(size, kChunk);
    float lo = 0.0f, hi = 0.0f;
    if (x_range != nullptr) {
      lo = x_range->data<float>()[0], hi = x_range->data<float>()[1];
      if (!(lo <= 0.0f && hi >= 0.0f))
        ctx.Fail(StrCat("X_range must be [min(0, X), max(0, X)], not [", lo, ", ", hi, "]"));
    } else {
      std::vector<float> los(static_cast<size_t>(chunks), 0.0f), his(static_cast<size_t>(chunks), 0.0f);
      ThreadPool::For(pool, chunks, static_cast<double>(kChunk), [&](int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c)
          linalg::Q8MinMax(xd + c * kChunk, std::min(kChunk, size - c * kChunk), &los[static_cast<size_t>(c)],
                           &his[static_cast<size_t>(c)]);
      });
      for (int64_t c = 0; c < chunks; ++c) {
        lo = std::min(lo, los[static_cast<size_t>(c)]);
        hi = std::max(hi, his[static_cast<size_t>(c)]);
      }
    }
    const float x_scale = (hi - lo) / 255.0f;
    float zero_point = 0.0f;
    if (x_scale != 0.0f) zero_point = std::nearbyint(std::clamp(0.0f - lo / x_scale, 0.0f, 255.0f));
    const auto x_zp = static_cast<uint8_t>(zero_point);
    // Kept per thread between calls (as Depthwise2d's scratch): a fresh buffer of a few hundred
    // KB each call came from mmap, and its page faults cost as much as the quantization.
    thread_local std::vector<uint8_t> buffer;
    if (buffer.size() < static_cast<size_t>(size)) buffer.resize(static_cast<size_t>(size));
    uint8_t* codes = buffer.data();  // the workers see this thread's buffer through the pointer
    ThreadPool::For(pool, chunks, 2.0 * static_cast<double>(kChunk), [&](int64_t c0, int64_t c1) {
      const int64_t begin = c0 * kChunk, end = std::min(size, c1 * kChunk);
      linalg::Q8QuantizeU8(xd + begin, end - begin, x_scale, x_zp, codes + begin);
    });
    // The Mul's operand Mul(s, w_scale) per output channel.
    const float* ws = w_scale.data<float>();
    std::vector<float> mult(static_cast<size_t>(m));
    for (int64_t c = 0; c < m; ++c) mult[static_cast<size_t>(c)] = x_scale * ws[w_scale.size() == 1 ? 0 : c];
    const float* bv = bias ? bias->data<float>() : nullptr;
    const int64_t bias_step = bias != nullptr && bias->size() != 1 ? 1 : 0;
    const float clip_lo = lo_, clip_hi = hi_;
    auto* yb = static_cast<uint8_t*>(y.raw_data());
    // Row `plane` (n * M + channel) of Y, values [p0, p0 + count): int32 in, float out, with the
    // graph's float operations (linalg/q8_to_float.h).
    const linalg::Q8ToFloatFn to_float = linalg::Q8ToFloatKernel();
    auto finish_row = [&](int64_t plane, int64_t p0, int64_t count) {
      const int64_t c = plane % m;
      to_float(yb + (plane * g.out_size + p0) * 4, count, mult[static_cast<size_t>(c)],
               bv != nullptr ? bv + c * bias_step : nullptr, clip_lo, clip_hi);
    };
    QuantWeights scratch;
    const QuantWeights& qw = WeightsFor(packed_w_, w, w_zp, g.group, pool, scratch);
    linalg::Q8Output out;
    out.c = y.raw_data();
    if (!qw.nchw.empty()) {
      // The weight-stationary GEMM writes the float result from its registers (the same
      // operations as finish_row, q8_gemm.h's kFloat): no int32 pass over Y.
      std::vector<float> bias_rows;
      if (bv != nullptr) {
        bias_rows.resize(static_cast<size_t>(m));
        for (int64_t c = 0; c < m; ++c) bias_rows[static_cast<size_t>(c)] = bv[c * bias_step];
      }
      out.kind = linalg::Q8Output::kFloat;
      out.scale = mult.data();
      out.scale_per_column = true;
      out.bias = bv != nullptr ? bias_rows.data() : nullptr;
      out.lo = clip_lo, out.hi = clip_hi;
      out.range = want_range ? y_range : nullptr;
      ConvNchw(g, codes, false, x_zp, qw, out, sizeof(float), pool);
      return write_range();
    }
    // The range of finished rows while they are in cache, merged under a lock.
    std::mutex range_mutex;
    auto add_range = [&](const float* v, int64_t count) {
      if (!want_range) return;
      float l = 0.0f, h = 0.0f;
      linalg::Q8MinMax(v, count, &l, &h);
      const std::lock_guard<std::mutex> lock(range_mutex);
      y_range[0] = std::min(y_range[0], l);
      y_range[1] = std::max(y_range[1], h);
    };
    // Else the int32 convolution into Y's buffer (int32 and float are both 4 bytes), finished in
    // pieces that are still in cache where the path allows it (runs of depthwise channels);
    // other paths finish the whole output after.
    if (!qw.depthwise.empty() && g.in.size() == 2) {
      const std::function<void(int64_t, int64_t)> finish = [&](int64_t bc, int64_t count) {
        for (int64_t p = bc; p < bc + count; ++p) finish_row(p, 0, g.out_size);
        add_range(y.data<float>() + bc * g.out_size, count * g.out_size);
      };
      Depthwise2d(g, codes, false, x_zp, qw.depthwise.data(), nullptr, y.raw_data(), sizeof(int32_t), pool, &finish);
      return write_range();
    }
    ConvInt8(ctx, g, codes, false, x_zp, qw, out, sizeof(int32_t), static_cast<int32_t*>(y.raw_data()));
    ThreadPool::For(pool, g.batch * m, 2.0 * static_cast<double>(g.out_size), [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) finish_row(p, 0, g.out_size);
      add_range(y.data<float>() + p0 * g.out_size, (p1 - p0) * g.out_size);
    });
    write_range();
  }

 private:
  ConvAttrs attrs_;
  QuantWeights packed_w_;
  float lo_ = -std::numeric_limits<float>::infinity(), hi_ = std::numeric_limits<float>::infinity();
};

ONYX_CPU_KERNEL("ConvInteger", 10, kOpsetMax, ConvInteger);
ONYX_REGISTER_KERNEL("CPU", "com.onyx", "DynamicQuantizeConv", 1, kOpsetMax, DynamicQuantizeConv);
ONYX_CPU_KERNEL("QLinearConv", 10, kOpsetMax, QLinearConv);
ONYX_REGISTER_KERNEL("CPU", "com.microsoft", "QLinearConv", 1, kOpsetMax, MsQLinearConv);
ONYX_REGISTER_KERNEL("CPU", "com.onyx", "QLinearConvSiLU", 1, kOpsetMax, QLinearConvSiLU);
ONYX_REGISTER_KERNEL("CPU", "com.onyx", "QLinearConvAdd", 1, kOpsetMax, QLinearConvAdd);

}  // namespace
}  // namespace onyx
