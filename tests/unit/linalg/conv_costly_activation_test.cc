// The activations past Relu and Clip (SiLU, Sigmoid, Tanh, HardSwish, LeakyRelu, HardSigmoid)
// run in a second pass over finished outputs: over each staged segment of a direct convolution
// with NCHWc output, over each output row of the blocked depthwise kernel, and in the blocked
// epilogue. Every ISA variant against the plain reference (and a scalar loop for the epilogue),
// with bias and residual (added before the activation), several segments and row groups, input
// channels in several chunks, and two threads splitting rows into parts.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "linalg/conv.h"
#include "linalg/conv_test_util.h"
#include "linalg/f32_conv_kernel.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {
namespace {

using testing::CheckProblem;
using testing::ForEachIsa;

Conv2dShape Shape(int64_t c, int64_t h, int64_t w, int64_t m, int64_t group, int64_t k, int64_t stride, int64_t pad) {
  Conv2dShape s;
  s.in_channels = c;
  s.in_h = h;
  s.in_w = w;
  s.out_channels = m;
  s.group = group;
  s.kernel_h = s.kernel_w = k;
  s.stride_h = s.stride_w = stride;
  s.pad_top = s.pad_left = s.pad_bottom = s.pad_right = pad;
  EXPECT_TRUE(s.ComputeOutputSize());
  return s;
}

std::vector<ConvActivation> CostlyActivations() {
  std::vector<ConvActivation> acts;
  for (const auto kind : {ConvActivation::kSilu, ConvActivation::kSigmoid, ConvActivation::kTanh,
                          ConvActivation::kHardSwish, ConvActivation::kLeakyRelu, ConvActivation::kHardSigmoid}) {
    ConvActivation a;
    a.kind = kind;
    a.alpha = 0.2f;
    a.beta = 0.5f;
    acts.push_back(a);
  }
  return acts;
}

TEST(ConvCostlyActivation, DirectNchwcOutput) {
  std::mt19937 rng(21);
  ThreadPool pool(2);
  auto make = [](const Conv2dShape& s, const float* w) { return DirectConv(s, w); };
  const Conv2dShape shapes[] = {
      Shape(16, 13, 17, 40, 1, 1, 1, 0),   // pointwise: one flat row of 221 pixels, several segments
      Shape(300, 5, 7, 24, 1, 1, 1, 0),    // input channels in several chunks
      Shape(20, 9, 11, 48, 1, 3, 1, 1),    // short rows grouped into one segment, tiles span rows
      Shape(32, 10, 130, 40, 1, 3, 2, 1),  // strided, rows longer than a segment
      Shape(3, 12, 14, 20, 1, 3, 2, 1),    // few input channels (a first layer)
  };
  ForEachIsa([&](const std::string&) {
    int i = 0;
    for (const Conv2dShape& s : shapes)
      for (const ConvActivation& act : CostlyActivations()) {
        ++i;
        CheckProblem(s, make, rng, i % 2 == 0, i % 3 != 0, act, true, i % 2 == 0 ? &pool : nullptr, 2e-4f);
      }
  });
}

TEST(ConvCostlyActivation, DepthwiseBlockedRows) {
  std::mt19937 rng(22);
  ThreadPool pool(2);
  auto make = [](const Conv2dShape& s, const float* w) { return DepthwiseConv(s, w); };
  ForEachIsa([&](const std::string&) {
    int i = 0;
    for (const Conv2dShape& s : {Shape(40, 9, 21, 40, 40, 3, 1, 1), Shape(24, 11, 13, 24, 24, 5, 2, 2)})
      for (const ConvActivation& act : CostlyActivations()) {
        ++i;
        CheckProblem(s, make, rng, true, i % 2 == 0, act, true, i % 3 == 0 ? &pool : nullptr, 1e-4f);
      }
  });
}

TEST(ConvCostlyActivation, EpilogueBlockedMatchesScalar) {
  ForEachIsa([&](const std::string&) {
    const ConvKernelTable& k = SelectedConvKernels();
    const int64_t b = k.block, pixels = 11;  // not a multiple of the 4-vector step
    std::mt19937 rng(23);
    const std::vector<float> base = testing::RandomVector(static_cast<size_t>(pixels * b), rng, -6.0f, 6.0f);
    const std::vector<float> bias = testing::RandomVector(static_cast<size_t>(b), rng);
    const std::vector<float> residual = testing::RandomVector(base.size(), rng);
    for (const ConvActivation& act : CostlyActivations())
      for (const bool extras : {false, true}) {
        std::vector<float> y = base;
        k.epilogue_blocked(y.data(), pixels, extras ? bias.data() : nullptr, extras ? residual.data() : nullptr, &act);
        for (size_t i = 0; i < y.size(); ++i) {
          const float v = extras ? base[i] + bias[i % b] + residual[i] : base[i];
          const float want = ActivateScalar(v, act);
          ASSERT_NEAR(y[i], want, 2e-6f + 2e-6f * std::fabs(want)) << "kind " << act.kind << " extras " << extras;
        }
      }
  });
}

}  // namespace
}  // namespace onyx::linalg
