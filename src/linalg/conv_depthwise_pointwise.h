// A depthwise convolution (NCHWc, one output per channel, any window) fused into the pointwise
// (1x1, stride 1, one group) convolution that reads it, as in MobileNet's inverted residual
// blocks: each task computes a band of the depthwise's output rows for every channel into a
// buffer that stays in cache, then the pointwise over that band, so the wide intermediate
// tensor never goes to memory.
//   t = dw_activation(depthwise(x, dw_w) + dw_bias)
//   y = activation(pointwise(t, pw_w) + bias + residual)
// x, y and residual are NCHWc (linalg/conv.h).
//
// Optionally with the block's expanding pointwise conv in front (WithExpand), so that its output,
// the widest tensor of the block, never goes to memory either:
//   t = dw_activation(depthwise(expand_activation(pointwise(x, expand_w) + expand_bias), dw_w) + dw_bias)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "linalg/conv.h"

namespace onyx::linalg {

struct DepthwisePointwiseArgs {
  const float* expand_bias = nullptr;  // [channels] or null; read only WithExpand
  ConvActivation expand_activation;
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
  // Puts the pointwise conv that makes the depthwise's input in front: expand's weight fields
  // (w [channels, in_channels, 1, 1]); x then has expand.in_channels channels. Needs
  // ExpandApplicable.
  void WithExpand(const Conv2dShape& expand, const float* w, const PackSource* source = nullptr);
  // Whether expand is a 1x1, stride 1, unpadded, one-group conv making dw's channels.
  static bool ExpandApplicable(const Conv2dShape& expand, const Conv2dShape& dw);
  bool has_expand() const { return !expand_.empty(); }
  // Channels of x: the expand's input, else the depthwise's.
  int64_t in_channels() const { return has_expand() ? in_channels_ : channels_; }
  bool empty() const { return depthwise_.empty() || pointwise_.empty(); }
  int block() const { return pointwise_.block(); }
  std::string name() const;
  // dw: the depthwise's full shape (batch, input and output sizes, window) for this call; its
  // channels are the depthwise's also WithExpand.
  bool Supports(const Conv2dShape& dw) const;
  void Run(const Conv2dShape& dw, const float* x, float* y, const DepthwisePointwiseArgs& args,
           ThreadPool* pool) const;
  int64_t out_channels() const { return out_channels_; }

 private:
  // Rows of output per band and the band count for dw on `threads` threads.
  struct Bands {
    int64_t count = 1, max_rows = 1;
  };
  Bands SplitIntoBands(const Conv2dShape& dw, int64_t threads) const;
  void RunExpanded(const Conv2dShape& dw, const float* x, float* y, const DepthwisePointwiseArgs& args,
                   ThreadPool* pool) const;

  DirectConv expand_;  // empty without WithExpand
  DepthwiseConv depthwise_;
  DirectConv pointwise_;
  int64_t in_channels_ = 0, channels_ = 0, out_channels_ = 0;
};

// Whole channel blocks of bias (zeros past `channels`), or empty for a null bias.
std::vector<float> PaddedBlockBias(const float* bias, int64_t channels, int64_t block);

}  // namespace onyx::linalg
