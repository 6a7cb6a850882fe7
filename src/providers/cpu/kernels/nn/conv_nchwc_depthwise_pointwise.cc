// com.onyx.NchwcDepthwisePointwiseConv(X, W_dw, B_dw?, W, B?, Z?): a depthwise NchwcConv fused
// into the pointwise NchwcConv that is its only reader (the NchwcDepthwisePointwiseFusion pass),
// computed band by band so the depthwise's output never goes to memory:
//   T = dw_activation(depthwise(X, W_dw) + B_dw)       (strides, pads, dilations, auto_pad,
//                                                      kernel_shape: the depthwise's window)
//   Y = activation(T * W + B + Z)                       (W [M, C, 1, 1])
// X, Z and Y are NCHWc with this CPU's block, as for NchwcConv; W_dw is [C, 1, kh, kw]
// (group C). 2-D, float.
// With W_exp (input 6; the NchwcExpandDepthwisePointwiseFusion pass), the block's expanding
// pointwise NchwcConv comes first and X has its input channels:
//   X' = exp_activation(X * W_exp + B_exp)             (W_exp [C, C_in, 1, 1], B_exp input 7)
// and the depthwise reads X' instead of X; X' is made a band of rows at a time too.
#include <string>

#include "linalg/conv_depthwise_pointwise.h"
#include "providers/cpu/kernels/linalg/packed_weights.h"
#include "providers/cpu/kernels/nn/conv_activation_attrs.h"
#include "providers/cpu/kernels/nn/conv_shape.h"
#include "providers/cpu/kernels/nn/window_geometry.h"
#include "providers/kernel.h"
#include "providers/kernel_variant.h"

namespace onyx {
namespace {

class NchwcDepthwisePointwiseConv final : public OpKernel {
 public:
  explicit NchwcDepthwisePointwiseConv(const KernelInfo& info)
      : attrs_(nn::ParseWindowAttrs(info)),
        exp_activation_(nn::ParseConvActivation(info, "exp_")),
        dw_activation_(nn::ParseConvActivation(info, "dw_")),
        activation_(nn::ParseConvActivation(info, "")) {
    const Tensor* dw = info.ConstantInput(1);
    const Tensor* pw = info.ConstantInput(3);
    if (dw == nullptr || pw == nullptr) info.Fail("W_dw and W must be constants (their blocked forms are prepared once)");
    if (dw->dtype() != DataType::kFloat || pw->dtype() != DataType::kFloat) info.Fail("W_dw and W must be float");
    if (dw->rank() != 4 || dw->dim(1) != 1 || dw->dim(0) == 0)
      info.Fail(StrCat("W_dw must be [C, 1, kh, kw], got ", ShapeToString(dw->shape())));
    channels_ = dw->dim(0);
    if (info.GetIntOr("group", channels_) != channels_)
      info.Fail(StrCat("group must be W_dw's channel count ", channels_));
    if (pw->rank() != 4 || pw->dim(1) != channels_ || pw->dim(2) != 1 || pw->dim(3) != 1 || pw->dim(0) == 0)
      info.Fail(StrCat("W must be [M, ", channels_, ", 1, 1], got ", ShapeToString(pw->shape())));
    out_channels_ = pw->dim(0);
    kernel_ = {dw->dim(2), dw->dim(3)};
    if (!attrs_.kernel_shape.empty() && attrs_.kernel_shape != kernel_)
      info.Fail(StrCat("kernel_shape [", StrJoin(attrs_.kernel_shape), "] differs from W_dw's spatial dims"));
    linalg::Conv2dShape d;
    d.in_channels = d.out_channels = d.group = channels_;
    d.kernel_h = kernel_[0];
    d.kernel_w = kernel_[1];
    auto at = [](const std::vector<int64_t>& v, size_t i) { return v.size() == 2 ? v[i] : 1; };
    d.stride_h = at(attrs_.strides, 0);
    d.stride_w = at(attrs_.strides, 1);
    d.dilation_h = at(attrs_.dilations, 0);
    d.dilation_w = at(attrs_.dilations, 1);
    linalg::Conv2dShape p;
    p.in_channels = channels_;
    p.out_channels = out_channels_;
    if (!linalg::DepthwisePointwiseConv::Applicable(d, p)) info.Fail("W_dw is not a depthwise window");
    const linalg::PackSource dw_source = linalg_kernels::PackSourceFor(info, 1);
    const linalg::PackSource pw_source = linalg_kernels::PackSourceFor(info, 3);
    engine_ = linalg::DepthwisePointwiseConv(d, dw->data<float>(), p, pw->data<float>(), &dw_source, &pw_source);
    if (info.has_input(6)) {
      PrepareExpand(info, d);
    } else if (info.has_input(7) || info.HasAttr("exp_activation")) {
      info.Fail("B_exp and exp_activation need W_exp (input 6)");
    }
    isa_ = linalg::ConvIsaName();
  }

  bool ReadsConstantInputAtRun(size_t input) const override { return input != 1 && input != 3 && input != 6; }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor* dw_b = ctx.input(2);
    const Tensor* b = ctx.input(4);
    const Tensor* z = ctx.input(5);
    const Tensor* exp_b = engine_.has_expand() ? ctx.input(7) : nullptr;
    const int64_t block = linalg::ConvBlockSize();
    if (engine_.block() != block) ctx.Fail("the kernels' ISA changed since the node was prepared");
    for (const Tensor* t : {&x, dw_b, b, z, exp_b})
      if (t != nullptr && t->dtype() != DataType::kFloat) ctx.Fail("X, B_dw, B, Z and B_exp must be float");
    const int64_t x_blocks = (engine_.in_channels() + block - 1) / block;
    const int64_t out_blocks = (out_channels_ + block - 1) / block;
    if (x.rank() != 5 || x.shape().back() != block || x.dim(1) != x_blocks)
      ctx.Fail(StrCat("X must be [N, ", x_blocks, ", H, W, ", block, "]"));
    if (dw_b != nullptr && (dw_b->rank() != 1 || dw_b->dim(0) != channels_))
      ctx.Fail(StrCat("B_dw must have shape [", channels_, "]"));
    if (exp_b != nullptr && (exp_b->rank() != 1 || exp_b->dim(0) != channels_))
      ctx.Fail(StrCat("B_exp must have shape [", channels_, "]"));
    if (b != nullptr && (b->rank() != 1 || b->dim(0) != out_channels_))
      ctx.Fail(StrCat("B must have shape [", out_channels_, "]"));
    const Shape plain = {x.dim(0), channels_, x.dim(2), x.dim(3)};
    const nn::WindowGeometry g = nn::ResolveForwardWindow(attrs_, plain, kernel_, ctx);
    const linalg::Conv2dShape s = nn::ToConv2dShape(g, x.dim(0), channels_, channels_, channels_);
    const Shape y_shape = {s.batch, out_blocks, s.out_h, s.out_w, block};
    if (z != nullptr && z->shape() != y_shape)
      ctx.Fail(StrCat("Z must have the output's blocked shape ", ShapeToString(y_shape)));
    Tensor& y = ctx.AllocateOutput(0, DataType::kFloat, y_shape);
    if (y.size() == 0) return;
    if (!engine_.Supports(s)) ctx.Fail("this depthwise window has no NCHWc form");
    linalg::DepthwisePointwiseArgs args;
    args.expand_bias = exp_b != nullptr ? exp_b->data<float>() : nullptr;
    args.expand_activation = exp_activation_;
    args.dw_bias = dw_b != nullptr ? dw_b->data<float>() : nullptr;
    args.dw_activation = dw_activation_;
    args.bias = b != nullptr ? b->data<float>() : nullptr;
    args.residual = z != nullptr ? z->data<float>() : nullptr;
    args.activation = activation_;
    NoteKernelVariant(engine_.has_expand() ? "pointwise + depthwise + pointwise NCHWc" : "depthwise + pointwise NCHWc",
                      isa_);
    engine_.Run(s, x.data<float>(), y.data<float>(), args, ctx.thread_pool());
  }

 private:
  // W_exp [C, C_in, 1, 1]: the expanding pointwise in front of the depthwise d.
  void PrepareExpand(const KernelInfo& info, const linalg::Conv2dShape& d) {
    const Tensor* w = info.ConstantInput(6);
    if (w == nullptr) info.Fail("W_exp must be a constant (its blocked form is prepared once)");
    if (w->dtype() != DataType::kFloat) info.Fail("W_exp must be float");
    if (w->rank() != 4 || w->dim(0) != channels_ || w->dim(1) == 0 || w->dim(2) != 1 || w->dim(3) != 1)
      info.Fail(StrCat("W_exp must be [", channels_, ", C_in, 1, 1], got ", ShapeToString(w->shape())));
    linalg::Conv2dShape e;
    e.in_channels = w->dim(1);
    e.out_channels = channels_;
    if (!linalg::DepthwisePointwiseConv::ExpandApplicable(e, d)) info.Fail("W_exp is not a pointwise window");
    const linalg::PackSource source = linalg_kernels::PackSourceFor(info, 6);
    engine_.WithExpand(e, w->data<float>(), &source);
  }

  nn::WindowAttrs attrs_;
  linalg::ConvActivation exp_activation_, dw_activation_, activation_;
  int64_t channels_ = 0, out_channels_ = 0;
  std::vector<int64_t> kernel_;
  linalg::DepthwisePointwiseConv engine_;
  const char* isa_ = "";
};

ONYX_REGISTER_KERNEL("CPU", "com.onyx", "NchwcDepthwisePointwiseConv", 1, kOpsetMax, NchwcDepthwisePointwiseConv);

}  // namespace
}  // namespace onyx
