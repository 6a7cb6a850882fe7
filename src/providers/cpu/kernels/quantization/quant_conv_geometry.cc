// Conv's attributes and geometry for the int8 convolutions (quant_conv_geometry.h).
#include "providers/cpu/kernels/quantization/quant_conv_geometry.h"

#include <algorithm>

namespace onyx {
namespace quant_conv {

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

ConvGeometry ResolveConv(KernelContext& ctx, const ConvAttrs& attrs, const Tensor& x, const Tensor& w,
                         bool channels_last) {
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

double PerChannel(const std::vector<double>& v, int64_t m) { return v.size() == 1 ? v[0] : v[static_cast<size_t>(m)]; }

void CheckPerChannel(KernelContext& ctx, const char* what, const Tensor* t, int64_t channels) {
  if (t != nullptr && t->size() != 1 && !(t->rank() == 1 && t->dim(0) == channels))
    ctx.Fail(StrCat(what, " must be a scalar or have one value per output channel (", channels, "), not ",
                    t->Describe()));
}

Shape OutputShape(const ConvGeometry& g) {
  Shape s{g.batch, g.out_channels};
  s.insert(s.end(), g.out.begin(), g.out.end());
  return s;
}

}  // namespace quant_conv
}  // namespace onyx
