// DepthwiseConv (every ISA variant) against the plain reference: 3x3 / 5x5 / other kernels,
// strides 1-3, dilations, asymmetric pads, channel multipliers, NCHW and NCHWc, epilogues.
#include <gtest/gtest.h>

#include <random>

#include "linalg/conv.h"
#include "linalg/conv_test_util.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {
namespace {

using testing::CheckProblem;
using testing::ForEachIsa;

auto MakeDepthwise = [](const Conv2dShape& s, const float* w) { return DepthwiseConv(s, w); };

Conv2dShape Depthwise(int64_t c, int64_t h, int64_t w, int64_t k, int64_t stride, int64_t pad, int64_t multiplier = 1,
                      int64_t dilation = 1, int64_t batch = 1) {
  Conv2dShape s;
  s.batch = batch;
  s.in_channels = s.group = c;
  s.out_channels = c * multiplier;
  s.in_h = h;
  s.in_w = w;
  s.kernel_h = s.kernel_w = k;
  s.stride_h = s.stride_w = stride;
  s.dilation_h = s.dilation_w = dilation;
  s.pad_top = s.pad_left = s.pad_bottom = s.pad_right = pad;
  EXPECT_TRUE(s.ComputeOutputSize());
  return s;
}

TEST(ConvDepthwise, MobileNetShapes) {
  std::mt19937 rng(1);
  ForEachIsa([&](const std::string&) {
    for (const Conv2dShape& s :
         {Depthwise(5, 13, 13, 3, 1, 1), Depthwise(6, 14, 15, 3, 2, 1), Depthwise(3, 11, 9, 5, 1, 2),
          Depthwise(7, 17, 20, 5, 2, 2), Depthwise(4, 7, 7, 5, 1, 2), Depthwise(2, 40, 37, 3, 1, 1),
          Depthwise(18, 8, 8, 3, 2, 1, 1, 1, 2), Depthwise(3, 1, 1, 3, 1, 1),
          // long rows: the row kernel with stride 2 (even lanes of two loads), masked edges
          Depthwise(4, 9, 111, 3, 2, 1), Depthwise(3, 7, 130, 5, 2, 2), Depthwise(2, 9, 120, 4, 2, 1),
          Depthwise(3, 6, 99, 3, 2, 0), Depthwise(2, 11, 100, 3, 2, 1, 1, 2)}) {
      for (bool blocked : {false, true}) {
        CheckProblem(s, MakeDepthwise, rng, true, false, {}, blocked, nullptr, 1e-4f);
        ConvActivation clip;
        clip.kind = ConvActivation::kClip;
        clip.alpha = 0.0f;
        clip.beta = 0.5f;
        CheckProblem(s, MakeDepthwise, rng, true, true, clip, blocked, nullptr, 1e-4f);
      }
    }
  });
}

TEST(ConvDepthwise, GeneralWindows) {
  std::mt19937 rng(9);
  auto pick = [&](std::initializer_list<int64_t> v) {
    return *(v.begin() + std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng));
  };
  ForEachIsa([&](const std::string&) {
    for (int iter = 0; iter < 80; ++iter) {
      Conv2dShape s;
      s.batch = pick({1, 2});
      s.in_channels = s.group = pick({2, 3, 9, 17});
      s.out_channels = s.in_channels * pick({1, 1, 2});
      s.kernel_h = pick({1, 2, 3, 5, 7});
      s.kernel_w = pick({1, 3, 4, 5});
      s.stride_h = pick({1, 2, 3});
      s.stride_w = pick({1, 2, 3});
      s.dilation_h = pick({1, 2});
      s.dilation_w = pick({1, 2});
      s.pad_top = pick({0, 1, 3});
      s.pad_left = pick({0, 1, 2});
      s.pad_bottom = pick({0, 2});
      s.pad_right = pick({0, 1, 4});
      s.in_h = pick({1, 3, 8, 11});
      s.in_w = pick({1, 6, 16, 19, 35});
      if (!s.ComputeOutputSize()) continue;
      ConvActivation act;
      act.kind = static_cast<ConvActivation::Kind>(iter % 9);
      act.alpha = 0.1f;
      act.beta = act.kind == ConvActivation::kClip ? 0.6f : 0.5f;
      const bool blocked = s.out_channels == s.in_channels && iter % 2 == 1;
      CheckProblem(s, MakeDepthwise, rng, iter % 3 != 0, iter % 4 == 0, act, blocked, nullptr, 2e-4f);
    }
  });
}

// The blocked kernel's register tiles (3/5/7-wide windows, strides 1 and 2, 6 or 8 pixels):
// widths on both sides of the tile sizes, so rows end in part-filled tiles, with tiles that
// start or end in the padding, uneven pads, pads wider than half the window, and windows
// taller than wide or dilated along the height.
TEST(ConvDepthwise, BlockedTilesAcrossWidths) {
  std::mt19937 rng(12);
  ForEachIsa([&](const std::string&) {
    for (int64_t kw : {3, 5, 7})
      for (int64_t stride : {1, 2})
        for (int64_t width : {1, 5, 6, 7, 8, 9, 13, 16, 17, 23}) {
          Conv2dShape s = Depthwise(19, 5, width, kw, stride, kw / 2);
          s.kernel_h = kw == 7 ? 3 : kw;
          s.pad_top = s.pad_bottom = s.kernel_h / 2;
          s.dilation_h = width % 2 == 0 ? 2 : 1;
          s.pad_left = width % 3 == 0 ? kw - 1 : kw / 2;
          s.pad_right = width % 3 == 1 ? 0 : kw / 2 + 1;
          if (!s.ComputeOutputSize()) continue;
          ConvActivation act;
          act.kind = width % 2 == 0 ? ConvActivation::kRelu : ConvActivation::kSilu;
          CheckProblem(s, MakeDepthwise, rng, true, width % 4 == 1, act, true, nullptr, 1e-4f);
          CheckProblem(s, MakeDepthwise, rng, false, false, {}, false, nullptr, 1e-4f);
        }
  });
}

TEST(ConvDepthwise, TwoThreads) {
  std::mt19937 rng(4);
  ThreadPool pool(2);
  ForEachIsa([&](const std::string&) {
    for (const Conv2dShape& s : {Depthwise(32, 28, 28, 3, 1, 1), Depthwise(24, 30, 30, 5, 2, 2, 1, 1, 2)}) {
      CheckProblem(s, MakeDepthwise, rng, true, true, {}, false, &pool, 1e-4f);
      CheckProblem(s, MakeDepthwise, rng, true, true, {}, true, &pool, 1e-4f);
    }
  });
}

// NCHWc blocks whose count the threads do not divide (9 blocks on 2 threads, 3 or 5 on 3) are
// split into equal row ranges: every row exactly once, 1-row ranges included.
TEST(ConvDepthwise, BlockedRowRangesAcrossThreads) {
  std::mt19937 rng(8);
  for (int threads : {2, 3}) {
    ThreadPool pool(threads);
    ForEachIsa([&](const std::string&) {
      for (const Conv2dShape& s : {Depthwise(144, 14, 14, 3, 1, 1), Depthwise(40, 7, 7, 5, 2, 2),
                                   Depthwise(72, 3, 9, 3, 1, 1), Depthwise(24, 2, 5, 3, 1, 1, 1, 1, 3)}) {
        CheckProblem(s, MakeDepthwise, rng, true, true, {}, true, &pool, 1e-4f);
      }
    });
  }
}

}  // namespace
}  // namespace onyx::linalg
