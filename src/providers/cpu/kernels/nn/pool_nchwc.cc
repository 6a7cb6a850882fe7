// Pooling and channel scaling on channel-blocked activations, for the NchwcLayout pass's regions
// (com.onyx domain, Onyx-own ops; see conv_nchwc.cc for the layout):
//   NchwcMaxPool(X [N, C / B, H, W, B])          -> [N, C / B, OH, OW, B]
//   NchwcAveragePool(X)                           -> [N, C / B, OH, OW, B]
//   NchwcGlobalAveragePool / NchwcGlobalMaxPool(X) -> [N, C / B, 1, 1, B]
//   NchwcScaleChannels(X, S [N, C / B, 1, 1, B])  -> X * S (a squeeze-excitation gate)
//   NchwcUpsample(X), scale_h, scale_w            -> [N, C / B, H * scale_h, W * scale_w, B]
// The 2-D pools take MaxPool's / AveragePool's window attributes (kernel_shape, strides, pads,
// dilations, auto_pad, ceil_mode; count_include_pad for averages); no Indices output. B must be
// the convolution kernels' block. Padded channels pool like the others: zeros in, zeros out.
#include <algorithm>
#include <string>

#include "linalg/conv.h"
#include "linalg/pool_nchwc.h"
#include "platform/thread_pool.h"
#include "providers/cpu/kernels/nn/window_geometry.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

// X's blocked shape checks; returns the block.
int64_t CheckBlockedInput(const Tensor& x, KernelContext& ctx) {
  if (x.dtype() != DataType::kFloat) ctx.Fail("X must be float");
  const int64_t block = linalg::ConvBlockSize();
  if (x.rank() != 5 || x.shape().back() != block)
    ctx.Fail(StrCat("X must be [N, C / ", block, ", H, W, ", block, "], got ", ShapeToString(x.shape())));
  return block;
}

template <bool kMax>
class NchwcPool final : public OpKernel {
 public:
  explicit NchwcPool(const KernelInfo& info) : attrs_(nn::ParseWindowAttrs(info)) {
    if (attrs_.kernel_shape.size() != 2)
      info.Fail(StrCat("kernel_shape must have 2 values, got [", StrJoin(attrs_.kernel_shape), "]"));
    if (info.GetIntOr("storage_order", 0) != 0) info.Fail("storage_order must be 0 (no Indices output)");
    count_include_pad_ = info.GetIntOr("count_include_pad", 0) != 0;
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const int64_t block = CheckBlockedInput(x, ctx);
    const Shape plain = {x.dim(0), x.dim(1) * block, x.dim(2), x.dim(3)};
    const nn::WindowGeometry g = nn::ResolveForwardWindow(attrs_, plain, attrs_.kernel_shape, ctx);
    linalg::NchwcPool2dShape s;
    s.batch = x.dim(0);
    s.channels = plain[1];
    s.in_h = g.in[0], s.in_w = g.in[1], s.out_h = g.out[0], s.out_w = g.out[1];
    s.kernel_h = g.kernel[0], s.kernel_w = g.kernel[1];
    s.stride_h = g.stride[0], s.stride_w = g.stride[1];
    s.dilation_h = g.dilation[0], s.dilation_w = g.dilation[1];
    s.pad_top = g.pad_begin[0], s.pad_left = g.pad_begin[1], s.pad_bottom = g.pad_end[0], s.pad_right = g.pad_end[1];
    Tensor& y = ctx.AllocateOutput(0, DataType::kFloat, {x.dim(0), x.dim(1), s.out_h, s.out_w, block});
    if (y.size() == 0) return;
    const auto kind = kMax                 ? linalg::NchwcPoolKind::kMax
                      : count_include_pad_ ? linalg::NchwcPoolKind::kAverageIncludePadding
                                           : linalg::NchwcPoolKind::kAverage;
    linalg::NchwcPool2d(kind, s, static_cast<int>(block), x.data<float>(), y.data<float>(), ctx.thread_pool());
  }

 private:
  nn::WindowAttrs attrs_;
  bool count_include_pad_ = false;
};

template <bool kMax>
class NchwcGlobalPool final : public OpKernel {
 public:
  explicit NchwcGlobalPool(const KernelInfo&) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const int64_t block = CheckBlockedInput(x, ctx);
    Tensor& y = ctx.AllocateOutput(0, DataType::kFloat, {x.dim(0), x.dim(1), 1, 1, block});
    if (y.size() == 0) return;
    linalg::NchwcGlobalPool(kMax, x.dim(0), x.dim(1) * block, x.dim(2) * x.dim(3), static_cast<int>(block),
                            x.data<float>(), y.data<float>(), ctx.thread_pool());
  }
};

class NchwcScaleChannels final : public OpKernel {
 public:
  explicit NchwcScaleChannels(const KernelInfo&) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& s = ctx.required_input(1);
    const int64_t block = CheckBlockedInput(x, ctx);
    if (s.dtype() != DataType::kFloat || s.shape() != Shape{x.dim(0), x.dim(1), 1, 1, block})
      ctx.Fail(StrCat("S must be float [", x.dim(0), ", ", x.dim(1), ", 1, 1, ", block, "], got ",
                      ShapeToString(s.shape())));
    Tensor& y = ctx.AllocateOutput(0, DataType::kFloat, x.shape());
    if (y.size() == 0) return;
    linalg::NchwcScaleChannels(x.dim(0), x.dim(1) * block, x.dim(2) * x.dim(3), static_cast<int>(block),
                               x.data<float>(), s.data<float>(), y.data<float>(), ctx.thread_pool());
  }
};

// Nearest upsampling by whole factors (attributes scale_h, scale_w >= 1), which NchwcLayout
// writes for a nearest Resize whose coordinate rule maps output pixel o to input pixel o / scale:
// Y [N, Cb, H * scale_h, W * scale_w, B] repeats each pixel's vector. One output row is built
// from an input row and copied down, so the op runs at memory speed (the generic Resize computes
// every element's source index, 5-D, at about 6x the time).
class NchwcUpsample final : public OpKernel {
 public:
  explicit NchwcUpsample(const KernelInfo& info) : scale_h_(info.GetInt("scale_h")), scale_w_(info.GetInt("scale_w")) {
    if (scale_h_ < 1 || scale_w_ < 1)
      info.Fail(StrCat("scale_h and scale_w must be >= 1, got ", scale_h_, " and ", scale_w_));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const int64_t block = CheckBlockedInput(x, ctx);
    const int64_t in_h = x.dim(2), in_w = x.dim(3), out_w = in_w * scale_w_;
    Tensor& y = ctx.AllocateOutput(0, DataType::kFloat, {x.dim(0), x.dim(1), in_h * scale_h_, out_w, block});
    if (y.size() == 0) return;
    const float* xd = x.data<float>();
    float* yd = y.data<float>();
    const int64_t in_row = in_w * block, out_row = out_w * block;
    ThreadPool::For(ctx.thread_pool(), x.dim(0) * x.dim(1) * in_h, static_cast<double>(out_row * scale_h_),
                    [&](int64_t begin, int64_t end) {
                      for (int64_t r = begin; r < end; ++r) {
                        const float* src = xd + r * in_row;
                        float* dst = yd + r * scale_h_ * out_row;
                        for (int64_t iw = 0; iw < in_w; ++iw)
                          for (int64_t k = 0; k < scale_w_; ++k)
                            std::copy_n(src + iw * block, block, dst + (iw * scale_w_ + k) * block);
                        for (int64_t k = 1; k < scale_h_; ++k) std::copy_n(dst, out_row, dst + k * out_row);
                      }
                    });
  }

 private:
  int64_t scale_h_, scale_w_;
};

ONYX_REGISTER_KERNEL("CPU", "com.onyx", "NchwcMaxPool", 1, kOpsetMax, NchwcPool<true>);
ONYX_REGISTER_KERNEL("CPU", "com.onyx", "NchwcUpsample", 1, kOpsetMax, NchwcUpsample);
ONYX_REGISTER_KERNEL("CPU", "com.onyx", "NchwcAveragePool", 1, kOpsetMax, NchwcPool<false>);
ONYX_REGISTER_KERNEL("CPU", "com.onyx", "NchwcGlobalMaxPool", 1, kOpsetMax, NchwcGlobalPool<true>);
ONYX_REGISTER_KERNEL("CPU", "com.onyx", "NchwcGlobalAveragePool", 1, kOpsetMax, NchwcGlobalPool<false>);
ONYX_REGISTER_KERNEL("CPU", "com.onyx", "NchwcScaleChannels", 1, kOpsetMax, NchwcScaleChannels);

}  // namespace
}  // namespace onyx
