// ConvInteger and QLinearConv (opset 10), com.microsoft.QLinearConv: checks, output shapes and
// the output stage around the compute paths (quant_conv_compute.h). Padding is the zero point,
// so it contributes nothing.
#include "providers/cpu/kernels/quantization/quant_conv.h"

#include <algorithm>
#include <vector>

#include "linalg/q8_quantize.h"
#include "platform/thread_pool.h"
#include "providers/cpu/kernels/quantization/quant_common.h"
#include "providers/cpu/kernels/quantization/quant_conv_compute.h"

namespace onyx {
namespace quant_conv {
namespace {

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

class MsQLinearConv final : public QLinearConv {
 public:
  explicit MsQLinearConv(const KernelInfo& info) : QLinearConv(info, info.GetIntOr("channels_last", 0) != 0) {}
};

}  // namespace

void QLinearConv::Compute(KernelContext& ctx) const {
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
  if (channels_last_ && (x.rank() != 4 || w.rank() != 4 ||
                         (attrs_.group != 1 && !IsDepthwise(x.dim(3), w.dim(0), attrs_.group))))
    ctx.Fail(StrCat("channels_last supports 2-D convolutions with group 1 or depthwise ones (group = input = output ",
                    "channels) only, not input ", x.Describe(), " with group ", attrs_.group));
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
    if (g.group != 1 && qw.depthwise_nhwc.empty())
      ctx.Fail("channels_last depthwise convolutions need every weight minus its zero point within int8");
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

ONYX_CPU_KERNEL("QLinearConv", 10, kOpsetMax, QLinearConv);
ONYX_REGISTER_KERNEL("CPU", "com.microsoft", "QLinearConv", 1, kOpsetMax, MsQLinearConv);
ONYX_CPU_KERNEL("ConvInteger", 10, kOpsetMax, ConvInteger);

}  // namespace quant_conv
}  // namespace onyx
