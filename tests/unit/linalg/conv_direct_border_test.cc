// DirectConv on padded inputs with long output rows that need no blocking (NCHWc ones, RGB
// planes), which it reads in place (no padded copy): border pixels take only the taps inside it.
// Every ISA against the reference: each side's border, strides, dilations, pads wider than the
// kernel's reach (pixels with no tap: bias, residual and activation only), rows longer than a
// segment, tap chunks of a single input block, NCHW output, one to three threads; and the check
// that no input copy is staged.
#include <gtest/gtest.h>

#include <random>
#include <thread>
#include <vector>

#include "linalg/conv.h"
#include "linalg/conv_scratch.h"
#include "linalg/conv_test_util.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {
namespace {

using testing::CheckProblem;
using testing::ForEachIsa;

auto MakeDirect = [](const Conv2dShape& s, const float* w) { return DirectConv(s, w); };

Conv2dShape Shape(int64_t c, int64_t h, int64_t w, int64_t m, int64_t kh, int64_t kw, int64_t stride,
                  int64_t dilation, int64_t top, int64_t left, int64_t bottom, int64_t right, int64_t batch = 1) {
  Conv2dShape s;
  s.batch = batch;
  s.in_channels = c;
  s.in_h = h;
  s.in_w = w;
  s.out_channels = m;
  s.kernel_h = kh;
  s.kernel_w = kw;
  s.stride_h = s.stride_w = stride;
  s.dilation_h = s.dilation_w = dilation;
  s.pad_top = top;
  s.pad_left = left;
  s.pad_bottom = bottom;
  s.pad_right = right;
  EXPECT_TRUE(s.ComputeOutputSize());
  return s;
}

// Output rows of at least 48 pixels per border column (else the input is copied, see
// conv_direct.cc).
const Conv2dShape kShapes[] = {
    Shape(32, 6, 130, 64, 3, 3, 2, 1, 1, 1, 1, 1),       // YOLO's downsampler: left and top border only
    Shape(32, 11, 211, 48, 3, 3, 2, 1, 1, 1, 1, 1),      // odd sizes: a right / bottom border too
    Shape(40, 5, 130, 32, 3, 3, 1, 1, 1, 1, 1, 1),       // rows longer than a segment, ragged blocks
    Shape(24, 7, 70, 70, 3, 3, 1, 1, 1, 1, 1, 0),        // a segment per row, channels off the block
    Shape(16, 5, 70, 64, 3, 3, 1, 1, 1, 1, 1, 0),        // one input block: taps in chunks (AVX-512)
    Shape(8, 9, 300, 64, 7, 7, 2, 1, 3, 3, 3, 3),        // one input block, 49 taps in chunks
    Shape(16, 9, 250, 32, 5, 3, 1, 2, 4, 3, 1, 2),       // dilated, asymmetric pads
    Shape(16, 4, 480, 16, 3, 3, 1, 1, 5, 5, 5, 5),       // pads wider than the kernel: pixels with no tap
    Shape(32, 6, 100, 32, 1, 1, 1, 1, 1, 2, 1, 0),       // a padded 1x1: the border is all padding
    Shape(48, 10, 200, 40, 3, 5, 3, 1, 2, 0, 0, 2),      // stride 3, one-sided pads
    Shape(16, 6, 130, 32, 3, 3, 2, 1, 1, 1, 1, 1, 2),    // batch 2
    Shape(3, 12, 300, 32, 7, 7, 2, 1, 3, 3, 3, 3),       // RGB stems, read in place as NCHW planes too
    Shape(3, 10, 200, 32, 6, 6, 2, 1, 2, 2, 2, 2),
};

TEST(ConvDirectBorder, PaddedNchwcInputMatchesReference) {
  std::mt19937 rng(41);
  ConvActivation relu;
  relu.kind = ConvActivation::kRelu;
  ConvActivation silu;
  silu.kind = ConvActivation::kSilu;
  ForEachIsa([&](const std::string&) {
    for (const Conv2dShape& s : kShapes) {
      CheckProblem(s, MakeDirect, rng, true, false, {}, true, nullptr, 1e-4f);
      CheckProblem(s, MakeDirect, rng, true, true, relu, true, nullptr, 1e-4f);
      CheckProblem(s, MakeDirect, rng, false, true, silu, true, nullptr, 1e-4f);
      CheckProblem(s, MakeDirect, rng, true, true, relu, false, nullptr, 1e-4f);  // NCHW
    }
  });
}

TEST(ConvDirectBorder, ThreadsSplittingRowsAndColumns) {
  std::mt19937 rng(43);
  for (int threads : {2, 3}) {
    ThreadPool pool(threads);
    ForEachIsa([&](const std::string&) {
      for (const Conv2dShape& s : kShapes) {
        CheckProblem(s, MakeDirect, rng, true, true, {}, true, &pool, 1e-4f);
        CheckProblem(s, MakeDirect, rng, true, false, {}, false, &pool, 1e-4f);
      }
    });
  }
}

// Grouped convolutions with block-aligned groups: each group's channel blocks read in place.
TEST(ConvDirectBorder, GroupedBlockedInput) {
  std::mt19937 rng(61);
  ForEachIsa([&](const std::string&) {
    for (int64_t stride : {1, 2}) {
      Conv2dShape s = Shape(64, 6, 130, 96, 3, 3, stride, 1, 1, 1, 1, 1);
      s.group = 2;
      ASSERT_TRUE(s.ComputeOutputSize());
      CheckProblem(s, MakeDirect, rng, true, true, {}, true, nullptr, 1e-4f);
      ThreadPool pool(2);
      CheckProblem(s, MakeDirect, rng, true, false, {}, true, &pool, 1e-4f);
    }
  });
}

// NCHWc input, NCHW output (the staged strip): the tiles of a border run land in the strip too.
TEST(ConvDirectBorder, BlockedInputPlainOutput) {
  std::mt19937 rng(47);
  ForEachIsa([&](const std::string&) {
    for (const Conv2dShape& s : kShapes) {
      const int b = ConvBlockSize();
      const int64_t cg = s.in_channels, in_plane = s.in_h * s.in_w, out_plane = s.out_h * s.out_w;
      const auto x = testing::RandomVector(static_cast<size_t>(s.batch * cg * in_plane), rng);
      const auto w = testing::RandomVector(static_cast<size_t>(s.out_channels * cg * s.kernel_h * s.kernel_w), rng);
      const auto bias = testing::RandomVector(static_cast<size_t>(s.out_channels), rng);
      const auto residual = testing::RandomVector(static_cast<size_t>(s.batch * s.out_channels * out_plane), rng);
      std::vector<float> want(residual.size());
      ConvReference(s, x.data(), w.data(), bias.data(), residual.data(), ConvActivation{}, want.data());
      std::vector<float> xb(static_cast<size_t>(s.batch * (cg + b - 1) / b * b * in_plane));
      ReorderToNchwc(x.data(), s.batch, cg, in_plane, b, xb.data(), nullptr);
      const DirectConv engine(s, w.data());
      ConvRunArgs args;
      args.bias = bias.data();
      args.residual = residual.data();
      args.x_layout = ConvLayout::kNchwc;
      ASSERT_TRUE(engine.Supports(s, args));
      std::vector<float> got(want.size(), std::nanf(""));
      engine.Run(s, xb.data(), got.data(), args, nullptr);
      testing::ExpectClose(got, want, 1e-4f, "NCHWc -> NCHW " + testing::Describe(s));
    }
  });
}

// The padding is read in place: a thread that ran only padded NCHWc convolutions never leased
// the padded-input buffer (an NCHW input, which is copied, does: the probe sees a copy).
TEST(ConvDirectBorder, NoPaddedCopyOfBlockedInput) {
  ForEachIsa([&](const std::string&) {
    const Conv2dShape s = Shape(32, 8, 130, 64, 3, 3, 2, 1, 1, 1, 1, 1);
    std::mt19937 rng(53);
    const auto w = testing::RandomVector(static_cast<size_t>(64 * 32 * 9), rng);
    const DirectConv engine(s, w.data());
    const int b = engine.block();
    const std::vector<float> x(static_cast<size_t>((32 + b - 1) / b * b * 8 * 130), 0.5f);
    std::vector<float> y(static_cast<size_t>((64 + b - 1) / b * b * s.out_h * s.out_w));
    size_t blocked_kept = 1, plain_kept = 0;
    std::thread([&] {
      ConvRunArgs args;
      args.x_layout = args.y_layout = ConvLayout::kNchwc;
      engine.Run(s, x.data(), y.data(), args, nullptr);
      blocked_kept = ConvScratch::KeptFloats(ScratchSlot::kInput);
      args.x_layout = args.y_layout = ConvLayout::kNchw;
      std::vector<float> y_plain(static_cast<size_t>(64 * s.out_h * s.out_w));
      engine.Run(s, x.data(), y_plain.data(), args, nullptr);
      plain_kept = ConvScratch::KeptFloats(ScratchSlot::kInput);
    }).join();
    EXPECT_EQ(blocked_kept, 0u);
    EXPECT_GT(plain_kept, 0u);
  });
}

// An RGB stem reads its NCHW planes in place too (few channels: they are not blocked).
TEST(ConvDirectBorder, NoPaddedCopyOfRgbPlanes) {
  ForEachIsa([&](const std::string&) {
    const Conv2dShape s = Shape(3, 16, 200, 32, 6, 6, 2, 1, 2, 2, 2, 2);
    std::mt19937 rng(59);
    const auto w = testing::RandomVector(static_cast<size_t>(32 * 3 * 36), rng);
    const DirectConv engine(s, w.data());
    const std::vector<float> x(static_cast<size_t>(3 * 16 * 200), 0.5f);
    std::vector<float> y(static_cast<size_t>(32 * s.out_h * s.out_w));
    size_t kept = 1;
    std::thread([&] {
      engine.Run(s, x.data(), y.data(), ConvRunArgs{}, nullptr);
      kept = ConvScratch::KeptFloats(ScratchSlot::kInput);
    }).join();
    EXPECT_EQ(kept, 0u);
  });
}

// The rule that reads a padded input in place: rows of 48 pixels per border column, or of 24
// when the padded copy would exceed half of L2 (stated: 2 MB, as on Sapphire Rapids).
TEST(ConvDirectBorder, InPlaceRuleWeighsTheCopyAgainstL2) {
  constexpr int64_t kL2 = int64_t{2} << 20;
  auto copy_bytes = [](const Conv2dShape& s) {
    return s.batch * s.in_channels * (s.in_h + s.pad_top + s.pad_bottom) * (s.in_w + s.pad_left + s.pad_right) *
           int64_t{sizeof(float)};
  };
  // ResNet-50's 3x3 stride 2 at 56x56, 128 channels: a 1.7 MB copy, 28-pixel rows.
  const Conv2dShape resnet_s2 = Shape(128, 56, 56, 128, 3, 3, 2, 1, 1, 1, 1, 1);
  EXPECT_TRUE(DirectConvReadsPaddingInPlace(resnet_s2, copy_bytes(resnet_s2), kL2));
  EXPECT_FALSE(DirectConvReadsPaddingInPlace(resnet_s2, copy_bytes(resnet_s2), 2 * kL2));  // the copy stays in L2
  // The same rows over 16 channels: a small copy.
  const Conv2dShape narrow = Shape(16, 56, 56, 128, 3, 3, 2, 1, 1, 1, 1, 1);
  EXPECT_FALSE(DirectConvReadsPaddingInPlace(narrow, copy_bytes(narrow), kL2));
  // 14- and 7-pixel rows are copied however big the input: the short tiles cost more.
  const Conv2dShape resnet_s2_28 = Shape(256, 28, 28, 256, 3, 3, 2, 1, 1, 1, 1, 1);
  EXPECT_FALSE(DirectConvReadsPaddingInPlace(resnet_s2_28, copy_bytes(resnet_s2_28), 1024));
  const Conv2dShape resnet_7 = Shape(512, 7, 7, 512, 3, 3, 1, 1, 1, 1, 1, 1);
  EXPECT_FALSE(DirectConvReadsPaddingInPlace(resnet_7, copy_bytes(resnet_7), 1024));
  // ResNet's 7x7 stem on RGB planes (0.6 MB, 3 border columns of 112): copied, as before.
  const Conv2dShape stem = Shape(3, 224, 224, 64, 7, 7, 2, 1, 3, 3, 3, 3);
  EXPECT_FALSE(DirectConvReadsPaddingInPlace(stem, copy_bytes(stem), kL2));
  // Long rows are read in place whatever the copy's size.
  const Conv2dShape yolo = Shape(32, 6, 130, 64, 3, 3, 2, 1, 1, 1, 1, 1);
  EXPECT_TRUE(DirectConvReadsPaddingInPlace(yolo, copy_bytes(yolo), kL2));
}

// A single input block's taps per pass: ResNet-50's stem (3 channels, 4 filter blocks of 16, 49
// taps) in passes of 42 (the 32 KB budget of 16-wide blocks), 8-wide blocks within 16 KB.
TEST(ConvDirectBorder, StemTapsPerPassFillTheL1Budget) {
  EXPECT_EQ(DirectConvTapsPerPass(16, 4, 3, 49), 42);
  EXPECT_EQ(DirectConvTapsPerPass(8, 2, 3, 49), 49);
  EXPECT_EQ(DirectConvTapsPerPass(8, 2, 8, 49), 32);
  EXPECT_EQ(DirectConvTapsPerPass(16, 4, 16, 49), 8);
  EXPECT_EQ(DirectConvTapsPerPass(16, 4, 16, 1), 1);
}

// 28-pixel rows of a big input (read in place where L2 is at most twice the 1.7 MB copy) match
// the reference on every ISA, one and two threads.
TEST(ConvDirectBorder, BigInputWithShortRowsMatchesReference) {
  std::mt19937 rng(67);
  const Conv2dShape s = Shape(128, 56, 56, 16, 3, 3, 2, 1, 1, 1, 1, 1);
  ConvActivation relu;
  relu.kind = ConvActivation::kRelu;
  ThreadPool pool(2);
  ForEachIsa([&](const std::string&) {
    CheckProblem(s, MakeDirect, rng, true, true, relu, true, nullptr, 1e-4f);
    CheckProblem(s, MakeDirect, rng, true, false, {}, true, &pool, 1e-4f);
  });
}

}  // namespace
}  // namespace onyx::linalg
