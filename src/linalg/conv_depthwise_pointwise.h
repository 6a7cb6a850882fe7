// A depthwise convolution (NCHWc, one output per channel, any window) fused into the pointwise
// (1x1, stride 1, one group) convolution that reads it, as in MobileNet's inverted residual
// blocks: each task computes a band of the depthwise's output rows for every channel into a
// buffer that stays in cache, then the pointwise over that band, so the wide intermediate
// tensor never goes to memory.
//   t = dw_activation(depthwise(x, dw_w) + dw_bias)
//   y = activation(pointwise(t, pw_w) + bias + residual)
// x, y and residual are NCHWc (linalg/conv.h).
#pragma once

#include <cstdint>
#include <string>

#include "linalg/conv.h"

namespace onyx::linalg {

struct DepthwisePointwiseArgs {
  const float* dw_bias = nullptr;  // [channels] or null
  ConvActivation dw_activation;
  const float* bias = nullptr;      // [out_channels] or null
  const float* residual = nullptr;  // laid out as y, or null; must not overlap y
  ConvActivation activation;
};

class DepthwisePointwiseConv {
 public:
  DepthwisePointwiseConv() = default;
  // dw: the depthwise's weight fields (w [C, 1, kh, kw]); pw: the pointwise's (w [M, C, 1, 1]).
  DepthwisePointwiseConv(const Conv2dShape& dw, const float* dw_w, const Conv2dShape& pw, const float* pw_w,
                         const PackSource* dw_source = nullptr, const PackSource* pw_source = nullptr);
  // Whether the pair can be fused: a depthwise with one output per channel feeding a 1x1,
  // stride 1, unpadded, one-group convolution of its channels.
  static bool Applicable(const Conv2dShape& dw, const Conv2dShape& pw);
  bool empty() const { return depthwise_.empty() || pointwise_.empty(); }
  int block() const { return pointwise_.block(); }
  std::string name() const;
  // dw: the depthwise's full shape (batch, input and output sizes, window) for this call.
  bool Supports(const Conv2dShape& dw) const;
  void Run(const Conv2dShape& dw, const float* x, float* y, const DepthwisePointwiseArgs& args,
           ThreadPool* pool) const;
  int64_t out_channels() const { return out_channels_; }

 private:
  DepthwiseConv depthwise_;
  DirectConv pointwise_;
  int64_t channels_ = 0, out_channels_ = 0;
};

}  // namespace onyx::linalg
