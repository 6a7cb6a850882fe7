// DepthwisePointwiseConv (every ISA variant) against two plain reference convolutions (the
// depthwise, then the 1x1 on its output): MobileNetV2 / EfficientNet block shapes, channel
// counts that are not whole blocks, strides, dilations, 5x5 windows, activations on both
// convolutions, bias and residual, batches, and maps with many bands on 1 and 2 threads; and
// WithExpand against three reference convolutions (the expanding 1x1 first).
#include <gtest/gtest.h>

#include <random>

#include "linalg/conv.h"
#include "linalg/conv_depthwise_pointwise.h"
#include "linalg/conv_test_util.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {
namespace {

using testing::Describe;
using testing::ExpectClose;
using testing::ForEachIsa;
using testing::RandomVector;

struct Problem {
  int64_t batch, channels, h, w, kernel, stride, pad, dilation, out_channels;
  int64_t expand_from = 0;  // with an expanding 1x1 from this many channels in front
};

ConvActivation Act(ConvActivation::Kind kind, float alpha = 0.0f, float beta = 0.0f) {
  ConvActivation a;
  a.kind = kind;
  a.alpha = alpha;
  a.beta = beta;
  return a;
}

void Check(const Problem& p, const ConvActivation& dw_act, const ConvActivation& act, bool bias, bool residual,
           ThreadPool* pool, std::mt19937& rng) {
  Conv2dShape dw;
  dw.batch = p.batch;
  dw.in_channels = dw.out_channels = dw.group = p.channels;
  dw.in_h = p.h;
  dw.in_w = p.w;
  dw.kernel_h = dw.kernel_w = p.kernel;
  dw.stride_h = dw.stride_w = p.stride;
  dw.dilation_h = dw.dilation_w = p.dilation;
  dw.pad_top = dw.pad_left = dw.pad_bottom = dw.pad_right = p.pad;
  ASSERT_TRUE(dw.ComputeOutputSize());
  Conv2dShape pw;
  pw.batch = p.batch;
  pw.in_channels = p.channels;
  pw.out_channels = p.out_channels;
  pw.in_h = pw.out_h = dw.out_h;
  pw.in_w = pw.out_w = dw.out_w;
  ASSERT_TRUE(DepthwisePointwiseConv::Applicable(dw, pw));

  const int64_t x_channels = p.expand_from > 0 ? p.expand_from : p.channels;
  const std::vector<float> x = RandomVector(static_cast<size_t>(p.batch * x_channels * p.h * p.w), rng);
  Conv2dShape ex;
  ex.batch = p.batch;
  ex.in_channels = x_channels;
  ex.out_channels = p.channels;
  ex.in_h = ex.out_h = p.h;
  ex.in_w = ex.out_w = p.w;
  const std::vector<float> ex_w = RandomVector(static_cast<size_t>(p.channels * x_channels), rng, -0.5f, 0.5f);
  const std::vector<float> ex_b = RandomVector(static_cast<size_t>(p.channels), rng);
  const ConvActivation ex_act = Act(ConvActivation::kClip, 0.0f, 6.0f);
  const std::vector<float> dw_w = RandomVector(static_cast<size_t>(p.channels * p.kernel * p.kernel), rng, -0.5f, 0.5f);
  const std::vector<float> dw_b = RandomVector(static_cast<size_t>(p.channels), rng);
  const std::vector<float> pw_w = RandomVector(static_cast<size_t>(p.out_channels * p.channels), rng, -0.5f, 0.5f);
  const std::vector<float> pw_b = RandomVector(static_cast<size_t>(p.out_channels), rng);
  const int64_t plane = dw.out_h * dw.out_w;
  const std::vector<float> z = RandomVector(static_cast<size_t>(p.batch * p.out_channels * plane), rng);

  std::vector<float> t(static_cast<size_t>(p.batch * p.channels * plane)), want(z.size());
  std::vector<float> e;
  if (p.expand_from > 0) {
    ASSERT_TRUE(DepthwisePointwiseConv::ExpandApplicable(ex, dw));
    e.resize(static_cast<size_t>(p.batch * p.channels * p.h * p.w));
    ConvReference(ex, x.data(), ex_w.data(), bias ? ex_b.data() : nullptr, nullptr, ex_act, e.data());
  }
  ConvReference(dw, p.expand_from > 0 ? e.data() : x.data(), dw_w.data(), bias ? dw_b.data() : nullptr, nullptr,
                dw_act, t.data());
  ConvReference(pw, t.data(), pw_w.data(), bias ? pw_b.data() : nullptr, residual ? z.data() : nullptr, act,
                want.data());

  DepthwisePointwiseConv engine(dw, dw_w.data(), pw, pw_w.data());
  if (p.expand_from > 0) engine.WithExpand(ex, ex_w.data());
  ASSERT_TRUE(engine.Supports(dw));
  ASSERT_EQ(engine.in_channels(), x_channels);
  const int b = engine.block();
  const int64_t cb = (x_channels + b - 1) / b, mb = (p.out_channels + b - 1) / b;
  std::vector<float> xb(static_cast<size_t>(p.batch * cb * b * p.h * p.w));
  ReorderToNchwc(x.data(), p.batch, x_channels, p.h * p.w, b, xb.data(), nullptr);
  std::vector<float> zb(static_cast<size_t>(p.batch * mb * b * plane));
  ReorderToNchwc(z.data(), p.batch, p.out_channels, plane, b, zb.data(), nullptr);
  std::vector<float> yb(zb.size(), std::nanf(""));
  DepthwisePointwiseArgs args;
  args.expand_bias = bias ? ex_b.data() : nullptr;
  args.expand_activation = ex_act;
  args.dw_bias = bias ? dw_b.data() : nullptr;
  args.dw_activation = dw_act;
  args.bias = bias ? pw_b.data() : nullptr;
  args.residual = residual ? zb.data() : nullptr;
  args.activation = act;
  engine.Run(dw, xb.data(), yb.data(), args, pool);
  std::vector<float> got(want.size());
  ReorderFromNchwc(yb.data(), p.batch, p.out_channels, plane, b, got.data(), nullptr);
  ExpectClose(got, want, 1e-4f,
              engine.name() + " " + Describe(dw) + " M" + std::to_string(p.out_channels) + " expand from " +
                  std::to_string(p.expand_from) +
                  (bias ? " bias" : "") + (residual ? " residual" : "") + " dw act " +
                  std::to_string(dw_act.kind) + " act " + std::to_string(act.kind) + " threads " +
                  std::to_string(pool != nullptr ? pool->num_threads() : 1));
}

TEST(ConvDepthwisePointwise, InvertedResidualShapes) {
  std::mt19937 rng(3);
  ThreadPool pool(2);
  const ConvActivation relu6 = Act(ConvActivation::kClip, 0.0f, 6.0f);
  ForEachIsa([&](const std::string&) {
    for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
      // MobileNetV2's first blocks (scaled down in width), many bands each.
      Check({1, 32, 56, 56, 3, 1, 1, 1, 16}, relu6, {}, true, false, tp, rng);
      Check({1, 96, 56, 56, 3, 2, 1, 1, 24}, relu6, {}, true, false, tp, rng);
      Check({1, 144, 28, 28, 3, 1, 1, 1, 24}, relu6, {}, true, true, tp, rng);
      // EfficientNet's SiLU and 5x5 windows, a SiLU after the pointwise too.
      Check({1, 40, 30, 30, 5, 2, 2, 1, 40}, Act(ConvActivation::kSilu), Act(ConvActivation::kSilu), true, true,
            tp, rng);
      // Channels that are not whole blocks, no bias, batches, dilation.
      Check({2, 20, 17, 23, 3, 1, 1, 1, 5}, Act(ConvActivation::kRelu), {}, false, false, tp, rng);
      Check({2, 3, 9, 40, 3, 1, 2, 2, 70}, {}, Act(ConvActivation::kHardSwish), true, true, tp, rng);
      Check({1, 24, 1, 1, 3, 1, 1, 1, 24}, relu6, Act(ConvActivation::kSigmoid), true, false, tp, rng);
      Check({3, 17, 7, 5, 5, 3, 1, 1, 33}, Act(ConvActivation::kLeakyRelu, 0.1f), {}, true, true, tp, rng);
    }
  });
}

TEST(ConvDepthwisePointwise, WithExpandInFront) {
  std::mt19937 rng(5);
  ThreadPool pool(2);
  const ConvActivation relu6 = Act(ConvActivation::kClip, 0.0f, 6.0f);
  ForEachIsa([&](const std::string&) {
    for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
      // MobileNetV2's expanded blocks (scaled down): stride 2 and stride 1 with the residual,
      // many bands each, so runs of bands keep the rows they share.
      Check({1, 96, 64, 64, 3, 2, 1, 1, 24, 16}, relu6, {}, true, false, tp, rng);
      Check({1, 144, 56, 56, 3, 1, 1, 1, 24, 24}, relu6, {}, true, true, tp, rng);
      // 5x5 and 7x7 windows, dilation, channels that are not whole blocks, batches.
      Check({2, 40, 30, 30, 5, 2, 2, 1, 40, 20}, Act(ConvActivation::kSilu), Act(ConvActivation::kSilu), true,
            true, tp, rng);
      Check({3, 20, 17, 23, 7, 1, 3, 1, 5, 3}, Act(ConvActivation::kRelu), {}, false, false, tp, rng);
      Check({2, 21, 19, 40, 3, 1, 2, 2, 70, 9}, {}, Act(ConvActivation::kHardSwish), true, true, tp, rng);
      // Stride 3 (bands share no row) and padding taller than the window (bands of bias alone).
      Check({1, 17, 20, 11, 3, 3, 1, 1, 33, 40}, Act(ConvActivation::kLeakyRelu, 0.1f), {}, true, true, tp, rng);
      Check({1, 16, 5, 6, 3, 1, 4, 1, 8, 16}, relu6, {}, true, false, tp, rng);
      Check({1, 24, 1, 1, 3, 1, 1, 1, 24, 8}, relu6, Act(ConvActivation::kSigmoid), true, false, tp, rng);
    }
  });
}

TEST(ConvDepthwisePointwise, NotApplicable) {
  Conv2dShape dw;
  dw.in_channels = dw.out_channels = dw.group = 8;
  dw.kernel_h = dw.kernel_w = 3;
  Conv2dShape pw;
  pw.in_channels = 8;
  pw.out_channels = 4;
  EXPECT_TRUE(DepthwisePointwiseConv::Applicable(dw, pw));
  Conv2dShape strided = pw;
  strided.stride_h = 2;
  EXPECT_FALSE(DepthwisePointwiseConv::Applicable(dw, strided));
  Conv2dShape wide = pw;
  wide.kernel_w = 3;
  EXPECT_FALSE(DepthwisePointwiseConv::Applicable(dw, wide));
  Conv2dShape padded = pw;
  padded.pad_left = 1;
  EXPECT_FALSE(DepthwisePointwiseConv::Applicable(dw, padded));
  Conv2dShape multiplier = dw;
  multiplier.out_channels = 16;
  pw.in_channels = 16;
  EXPECT_FALSE(DepthwisePointwiseConv::Applicable(multiplier, pw));
  Conv2dShape grouped = dw;
  grouped.group = 1;
  pw.in_channels = 8;
  EXPECT_FALSE(DepthwisePointwiseConv::Applicable(grouped, pw));
  Conv2dShape expand;
  expand.in_channels = 3;
  expand.out_channels = 8;
  EXPECT_TRUE(DepthwisePointwiseConv::ExpandApplicable(expand, dw));
  Conv2dShape narrow = expand;
  narrow.out_channels = 4;
  EXPECT_FALSE(DepthwisePointwiseConv::ExpandApplicable(narrow, dw));
  Conv2dShape windowed = expand;
  windowed.kernel_h = 3;
  EXPECT_FALSE(DepthwisePointwiseConv::ExpandApplicable(windowed, dw));
  Conv2dShape strided_expand = expand;
  strided_expand.stride_w = 2;
  EXPECT_FALSE(DepthwisePointwiseConv::ExpandApplicable(strided_expand, dw));
}

}  // namespace
}  // namespace onyx::linalg
