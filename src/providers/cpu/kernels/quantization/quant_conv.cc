// ConvInteger and QLinearConv (opset 10): N-d grouped convolution of uint8/int8 data with
// zero points, accumulated exactly in int32 (im2col + GemmInt32). Padding contributes the zero
// point, i.e. nothing once the input is centered. QLinearConv adds the int32 bias and
// requantizes with x_scale * w_scale / y_scale (w_scale / w_zero_point per output channel or
// per tensor).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "platform/thread_pool.h"
#include "providers/cpu/kernels/cast/element_convert.h"
#include "providers/cpu/kernels/quantization/quant_common.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

// Columns of the im2col buffer per GEMM: bounds the scratch for large images.
constexpr int64_t kColumnTile = 4096;

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

ConvGeometry ResolveConv(KernelContext& ctx, const ConvAttrs& attrs, const Tensor& x, const Tensor& w) {
  if (x.rank() < 3) ctx.Fail(StrCat("input must have rank >= 3 (N, C, spatial...), not ", x.Describe()));
  if (w.rank() != x.rank()) ctx.Fail(StrCat("weight rank ", w.rank(), " differs from input rank ", x.rank()));
  const size_t nd = x.rank() - 2;
  ConvGeometry g;
  g.batch = x.dim(0);
  g.channels = x.dim(1);
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
  g.in.assign(x.shape().begin() + 2, x.shape().end());
  g.out.resize(nd);
  g.pad_begin.resize(nd);
  for (size_t d = 0; d < nd; ++d) {
    const int64_t extent = (g.kernel[d] - 1) * g.dilation[d] + 1;
    int64_t begin = pads[d], end = pads[d + nd];
    if (attrs.auto_pad == "VALID") {
      begin = end = 0;
    } else if (attrs.auto_pad != "NOTSET") {
      const int64_t out = (g.in[d] + g.stride[d] - 1) / g.stride[d];
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

// Weights minus their zero point (per tensor or per output channel), [M, C/group * kernel].
std::vector<int32_t> CenterWeights(const Tensor& w, const std::vector<double>& w_zp) {
  std::vector<int64_t> wv(static_cast<size_t>(w.size()));
  if (!wv.empty()) LoadInt64s(w, 0, w.size(), wv.data());
  std::vector<int32_t> wc(wv.size());
  const int64_t m_count = w.dim(0), per = m_count == 0 ? 0 : w.size() / m_count;
  for (int64_t m = 0; m < m_count; ++m) {
    const auto zp = static_cast<int64_t>(PerChannel(w_zp, m));
    for (int64_t r = 0; r < per; ++r)
      wc[static_cast<size_t>(m * per + r)] = static_cast<int32_t>(wv[static_cast<size_t>(m * per + r)] - zp);
  }
  return wc;
}

// Centered weights pre-packed at session creation when w and its zero point are constants.
std::vector<int32_t> PrepackWeights(const KernelInfo& info, size_t w_index, size_t zp_index) {
  const Tensor* w = info.ConstantInput(w_index);
  const Tensor* zp = info.has_input(zp_index) ? info.ConstantInput(zp_index) : nullptr;
  if (w == nullptr || w->rank() < 3 || (info.has_input(zp_index) && zp == nullptr)) return {};
  if (!IsInt8Type(w->dtype()) || (zp && (zp->dtype() != w->dtype() || (zp->size() != 1 && zp->size() != w->dim(0)))))
    return {};  // Compute reports the error
  return CenterWeights(*w, zp ? AllAsDoubles(*zp) : std::vector<double>{0.0});
}

// int32 convolution of centered x and centered weights wc: y[n, m, out...] = sum (x - x_zp) * wc.
void ConvInt32(KernelContext& ctx, const ConvGeometry& g, const Tensor& x, const std::vector<int32_t>& wc,
               int64_t x_zp, int32_t* y) {
  const int64_t cg = g.channels / g.group, mg = g.out_channels / g.group;
  const int64_t rows = cg * g.kernel_size;  // GEMM depth
  const size_t nd = g.in.size();
  std::vector<int64_t> xv(static_cast<size_t>(g.channels * g.in_size));
  std::vector<int32_t> col, tile;
  for (int64_t n = 0; n < g.batch; ++n) {
    LoadInt64s(x, n * g.channels * g.in_size, g.channels * g.in_size, xv.data());
    for (int64_t grp = 0; grp < g.group; ++grp) {
      for (int64_t p0 = 0; p0 < g.out_size; p0 += kColumnTile) {
        const int64_t cols = std::min(kColumnTile, g.out_size - p0);
        col.assign(static_cast<size_t>(rows * cols), 0);
        // Input coordinate of each output position before the kernel offset: [d][q].
        std::vector<int64_t> base(nd * static_cast<size_t>(cols));
        for (int64_t q = 0; q < cols; ++q) {
          int64_t prem = p0 + q;
          for (size_t d = nd; d-- > 0;) {
            base[d * static_cast<size_t>(cols) + static_cast<size_t>(q)] = (prem % g.out[d]) * g.stride[d] - g.pad_begin[d];
            prem /= g.out[d];
          }
        }
        // im2col: row r = (c, kernel offset), column = output position; padding stays 0.
        ThreadPool::For(ctx.thread_pool(), rows, 4.0 * static_cast<double>(cols), [&](int64_t rb, int64_t re) {
          std::vector<int64_t> kofs(nd);
          for (int64_t r = rb; r < re; ++r) {
            const int64_t c = r / g.kernel_size;
            int64_t krem = r % g.kernel_size;
            for (size_t d = nd; d-- > 0;) kofs[d] = (krem % g.kernel[d]) * g.dilation[d], krem /= g.kernel[d];
            const int64_t* xc = xv.data() + (grp * cg + c) * g.in_size;
            int32_t* out = col.data() + r * cols;
            for (int64_t q = 0; q < cols; ++q) {
              int64_t offset = 0;
              bool inside = true;
              for (size_t d = 0; d < nd && inside; ++d) {
                const int64_t pos = base[d * static_cast<size_t>(cols) + static_cast<size_t>(q)] + kofs[d];
                inside = pos >= 0 && pos < g.in[d];
                offset = offset * g.in[d] + pos;
              }
              if (inside) out[q] = static_cast<int32_t>(xc[offset] - x_zp);
            }
          }
        });
        tile.resize(static_cast<size_t>(mg * cols));
        GemmInt32(mg, cols, rows, wc.data() + grp * mg * rows, rows, col.data(), cols, tile.data(), cols,
                  ctx.thread_pool());
        for (int64_t m = 0; m < mg; ++m)
          std::copy(tile.begin() + m * cols, tile.begin() + (m + 1) * cols,
                    y + (n * g.out_channels + grp * mg + m) * g.out_size + p0);
      }
    }
  }
}

Shape OutputShape(const ConvGeometry& g) {
  Shape s{g.batch, g.out_channels};
  s.insert(s.end(), g.out.begin(), g.out.end());
  return s;
}

class ConvInteger final : public OpKernel {
 public:
  explicit ConvInteger(const KernelInfo& info) : attrs_(ReadConvAttrs(info)), packed_w_(PrepackWeights(info, 1, 3)) {}

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
    const int64_t xz = x_zp ? AllAsInt64s(*x_zp)[0] : 0;
    const std::vector<double> wz = w_zp ? AllAsDoubles(*w_zp) : std::vector<double>{0.0};
    Tensor& y = ctx.AllocateOutput(0, DataType::kInt32, OutputShape(g));
    if (y.size() == 0) return;
    ConvInt32(ctx, g, x, packed_w_.empty() ? CenterWeights(w, wz) : packed_w_, xz, y.data<int32_t>());
  }

 private:
  ConvAttrs attrs_;
  std::vector<int32_t> packed_w_;
};

class QLinearConv final : public OpKernel {
 public:
  explicit QLinearConv(const KernelInfo& info) : attrs_(ReadConvAttrs(info)), packed_w_(PrepackWeights(info, 3, 5)) {}

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
    const ConvGeometry g = ResolveConv(ctx, attrs_, x, w);
    CheckPerChannel(ctx, "w_scale", &w_scale, g.out_channels);
    CheckPerChannel(ctx, "w_zero_point", &w_zp, g.out_channels);
    if (bias && (bias->dtype() != DataType::kInt32 || bias->rank() != 1 || bias->dim(0) != g.out_channels))
      ctx.Fail(StrCat("B must be int32 with one value per output channel (", g.out_channels, "), not ",
                      bias->Describe()));
    const std::vector<double> ws = AllAsDoubles(w_scale), wz = AllAsDoubles(w_zp);
    const auto xs = static_cast<float>(AllAsDoubles(x_scale)[0]);
    const auto ys = static_cast<float>(AllAsDoubles(y_scale)[0]);
    const double yz = AllAsDoubles(y_zp)[0];
    const std::vector<int64_t> b = bias ? AllAsInt64s(*bias) : std::vector<int64_t>();
    const Shape out_shape = OutputShape(g);
    Tensor& y = ctx.AllocateOutput(0, y_zp.dtype(), out_shape);
    if (y.size() == 0) return;
    std::vector<int32_t> acc(static_cast<size_t>(y.size()));
    ConvInt32(ctx, g, x, packed_w_.empty() ? CenterWeights(w, wz) : packed_w_, AllAsInt64s(x_zp)[0], acc.data());
    int64_t lo = 0, hi = 0;
    QuantIntegerRange(y_zp.dtype(), &lo, &hi);
    std::vector<int64_t> q(acc.size());
    for (int64_t n = 0; n < g.batch; ++n) {
      for (int64_t m = 0; m < g.out_channels; ++m) {
        // Multiplier in float as the reference computes it; the product in double.
        const double mult = static_cast<double>(xs * static_cast<float>(PerChannel(ws, m)) / ys);
        const int32_t bm = b.empty() ? 0 : static_cast<int32_t>(b[static_cast<size_t>(m)]);
        const size_t base = static_cast<size_t>((n * g.out_channels + m) * g.out_size);
        for (int64_t p = 0; p < g.out_size; ++p) {
          const auto total = static_cast<int32_t>(static_cast<uint32_t>(acc[base + p]) + static_cast<uint32_t>(bm));
          q[base + p] = RoundAndSaturate(static_cast<double>(total) * mult + yz, lo, hi, static_cast<int64_t>(yz));
        }
      }
    }
    StoreInt64s(y, 0, y.size(), q.data(), ConvertOptions{});
  }

 private:
  ConvAttrs attrs_;
  std::vector<int32_t> packed_w_;
};

ONYX_CPU_KERNEL("ConvInteger", 10, kOpsetMax, ConvInteger);
ONYX_CPU_KERNEL("QLinearConv", 10, kOpsetMax, QLinearConv);

}  // namespace
}  // namespace onyx
