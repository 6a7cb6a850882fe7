#include "providers/cpu/kernels/nn/window_geometry.h"

namespace onyx::nn {

WindowAttrs ParseWindowAttrs(const KernelInfo& info) {
  WindowAttrs a;
  const std::string auto_pad = info.GetStringOr("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET" || auto_pad.empty()) a.auto_pad = AutoPad::kNotSet;
  else if (auto_pad == "SAME_UPPER") a.auto_pad = AutoPad::kSameUpper;
  else if (auto_pad == "SAME_LOWER") a.auto_pad = AutoPad::kSameLower;
  else if (auto_pad == "VALID") a.auto_pad = AutoPad::kValid;
  else info.Fail(StrCat("auto_pad '", auto_pad, "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID"));
  a.kernel_shape = info.GetIntsOr("kernel_shape", {});
  a.strides = info.GetIntsOr("strides", {});
  a.dilations = info.GetIntsOr("dilations", {});
  a.pads = info.GetIntsOr("pads", {});
  a.ceil_mode = info.GetIntOr("ceil_mode", 0) != 0;
  auto check = [&](const std::vector<int64_t>& v, const char* name, int64_t min) {
    for (int64_t x : v)
      if (x < min) info.Fail(StrCat("attribute ", name, " [", StrJoin(v), "] must hold values >= ", min));
  };
  check(a.kernel_shape, "kernel_shape", 1);
  check(a.strides, "strides", 1);
  check(a.dilations, "dilations", 1);
  check(a.pads, "pads", 0);
  return a;
}

bool WindowGeometry::IsPointwise() const {
  for (size_t d = 0; d < rank(); ++d)
    if (kernel[d] != 1 || stride[d] != 1 || pad_begin[d] != 0 || pad_end[d] != 0 || in[d] != out[d]) return false;
  return true;
}

std::string WindowGeometry::Describe() const {
  return StrCat("input [", StrJoin(in), "], kernel [", StrJoin(kernel), "], strides [", StrJoin(stride),
                "], dilations [", StrJoin(dilation), "], pads [", StrJoin(pad_begin), ", ", StrJoin(pad_end), "]");
}

void CheckWindowAttrRanks(const WindowAttrs& attrs, size_t rank, const KernelContext& ctx) {
  auto check = [&](const std::vector<int64_t>& v, const char* name, size_t want) {
    if (!v.empty() && v.size() != want)
      ctx.Fail(StrCat("attribute ", name, " has ", v.size(), " values, expected ", want, " for ", rank,
                      " spatial dimensions"));
  };
  check(attrs.kernel_shape, "kernel_shape", rank);
  check(attrs.strides, "strides", rank);
  check(attrs.dilations, "dilations", rank);
  check(attrs.pads, "pads", 2 * rank);
}

WindowGeometry ResolveForwardWindow(const WindowAttrs& attrs, const Shape& x_shape, const std::vector<int64_t>& kernel,
                                    const KernelContext& ctx) {
  if (x_shape.size() < 3)
    ctx.Fail(StrCat("input must have rank >= 3 (N, C, spatial...), got shape ", ShapeToString(x_shape)));
  const size_t r = x_shape.size() - 2;
  CheckWindowAttrRanks(attrs, r, ctx);
  if (kernel.size() != r)
    ctx.Fail(StrCat("kernel has ", kernel.size(), " dimensions, input has ", r, " spatial dimensions"));
  WindowGeometry g;
  g.in.assign(x_shape.begin() + 2, x_shape.end());
  g.kernel = kernel;
  g.stride = attrs.strides.empty() ? std::vector<int64_t>(r, 1) : attrs.strides;
  g.dilation = attrs.dilations.empty() ? std::vector<int64_t>(r, 1) : attrs.dilations;
  g.pad_begin.assign(r, 0);
  g.pad_end.assign(r, 0);
  g.out.assign(r, 0);
  for (size_t d = 0; d < r; ++d) {
    if (g.kernel[d] < 1) ctx.Fail(StrCat("kernel dimension ", d, " is ", g.kernel[d], ", must be >= 1"));
    const int64_t in = g.in[d], s = g.stride[d];
    const int64_t window = (g.kernel[d] - 1) * g.dilation[d] + 1;
    if (attrs.auto_pad == AutoPad::kSameUpper || attrs.auto_pad == AutoPad::kSameLower) {
      g.out[d] = CeilDiv(in, s);
      const int64_t total = std::max<int64_t>(0, (g.out[d] - 1) * s + window - in);
      const int64_t small = total / 2, large = total - total / 2;
      g.pad_begin[d] = attrs.auto_pad == AutoPad::kSameUpper ? small : large;
      g.pad_end[d] = attrs.auto_pad == AutoPad::kSameUpper ? large : small;
      continue;
    }
    if (attrs.auto_pad == AutoPad::kNotSet && !attrs.pads.empty()) {
      g.pad_begin[d] = attrs.pads[d];
      g.pad_end[d] = attrs.pads[d + r];
    }
    const int64_t span = in + g.pad_begin[d] + g.pad_end[d] - window;
    if (span < 0 && in == 0) continue;  // an empty input gives an empty output
    if (span < 0)
      ctx.Fail(StrCat("the window (", window, " wide with dilation) is larger than the padded input in spatial dimension ",
                      d, ": ", g.Describe()));
    int64_t out = (attrs.ceil_mode ? CeilDiv(span, s) : span / s) + 1;
    // In ceil mode the last window must still start inside the input or its leading pad.
    if (attrs.ceil_mode && (out - 1) * s >= in + g.pad_begin[d]) --out;
    g.out[d] = out;
  }
  // One output position reads one window whatever the stride: the kernels step by it, and a
  // stride near INT64_MAX (a mutated model) overflowed their offsets and corrupted the heap.
  for (size_t d = 0; d < r; ++d)
    if (g.out[d] == 1) g.stride[d] = 1;
  return g;
}

}  // namespace onyx::nn
