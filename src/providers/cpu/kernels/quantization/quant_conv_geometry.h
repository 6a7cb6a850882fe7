// The attributes and per-call geometry of the int8 convolutions (ConvInteger, QLinearConv and
// the fused forms): reading Conv's attributes, resolving pads (auto_pad included), strides and
// output sizes, and the checks of per-channel parameters they share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "onyx/tensor.h"
#include "providers/kernel.h"

namespace onyx {
namespace quant_conv {

struct ConvAttrs {
  std::string auto_pad = "NOTSET";
  std::vector<int64_t> dilations, kernel_shape, pads, strides;
  int64_t group = 1;
};

ConvAttrs ReadConvAttrs(const KernelInfo& info);

// The geometry of one convolution call.
struct ConvGeometry {
  int64_t batch = 0, channels = 0, out_channels = 0, group = 1;
  std::vector<int64_t> in, kernel, out, stride, dilation, pad_begin;
  int64_t in_size = 1, kernel_size = 1, out_size = 1;
};

// channels_last: x is [N, spatial..., C] (com.microsoft.QLinearConv's channels_last).
ConvGeometry ResolveConv(KernelContext& ctx, const ConvAttrs& attrs, const Tensor& x, const Tensor& w,
                         bool channels_last = false);

bool IsInt8Type(DataType t);

// Zero point (or scale) of output channel `m`: per tensor or per channel.
double PerChannel(const std::vector<double>& v, int64_t m);

// Fails unless t (optional) is a scalar or has one value per output channel.
void CheckPerChannel(KernelContext& ctx, const char* what, const Tensor* t, int64_t channels);

// [N, M, out spatial...].
Shape OutputShape(const ConvGeometry& g);

}  // namespace quant_conv
}  // namespace onyx
