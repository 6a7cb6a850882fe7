// WinogradConv F(4x4, 3x3) (every ISA variant) against the plain reference: image sizes that
// are and are not multiples of the 4x4 tile, SAME and VALID and asymmetric pads, ragged channel
// blocks, NCHW and NCHWc, epilogues, chunked and parallel runs. F(4x4, 3x3) in float keeps
// errors near 1e-5 of the output scale for these channel counts.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>

#include "linalg/conv.h"
#include "linalg/f32_conv_kernel.h"
#include "linalg/conv_test_util.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {
namespace {

using testing::CheckProblem;
using testing::ForEachIsa;

auto MakeWinograd = [](const Conv2dShape& s, const float* w) { return WinogradConv(s, w); };

Conv2dShape Conv3x3(int64_t n, int64_t c, int64_t h, int64_t w, int64_t m, int64_t pad_tl, int64_t pad_br) {
  Conv2dShape s;
  s.batch = n;
  s.in_channels = c;
  s.out_channels = m;
  s.in_h = h;
  s.in_w = w;
  s.kernel_h = s.kernel_w = 3;
  s.pad_top = s.pad_left = pad_tl;
  s.pad_bottom = s.pad_right = pad_br;
  EXPECT_TRUE(s.ComputeOutputSize());
  return s;
}

TEST(ConvWinograd, Shapes) {
  std::mt19937 rng(1);
  ForEachIsa([&](const std::string&) {
    for (const Conv2dShape& s :
         {Conv3x3(1, 16, 8, 8, 16, 1, 1), Conv3x3(1, 17, 9, 11, 23, 1, 1), Conv3x3(2, 8, 7, 5, 8, 0, 0),
          Conv3x3(1, 3, 3, 3, 5, 1, 1), Conv3x3(1, 32, 13, 6, 40, 0, 2), Conv3x3(1, 5, 1, 1, 4, 1, 1),
          Conv3x3(1, 20, 30, 50, 24, 1, 1)}) {
      CheckProblem(s, MakeWinograd, rng, true, false, {}, false, nullptr, 5e-4f);
      ConvActivation silu;
      silu.kind = ConvActivation::kSilu;
      CheckProblem(s, MakeWinograd, rng, true, true, silu, false, nullptr, 5e-4f);
      CheckProblem(s, MakeWinograd, rng, false, true, {}, true, nullptr, 5e-4f);
    }
  });
}

TEST(ConvWinograd, ChunksAndThreads) {
  std::mt19937 rng(8);
  ThreadPool pool(2);
  ConvActivation relu;
  relu.kind = ConvActivation::kRelu;
  ForEachIsa([&](const std::string&) {
    // Many chunks (whole chunks per thread), chunks that start and end inside a tile row (45x67
    // outputs: 12 x 17 tiles in 4 chunks of 51; 3 images of 3 x 3 tiles in 6 chunks for 2
    // threads), a single chunk (each phase parallel) and a 256-channel 14x14 image that just
    // fills one chunk.
    for (const Conv2dShape& s :
         {Conv3x3(1, 64, 64, 72, 64, 1, 1), Conv3x3(1, 64, 45, 67, 48, 1, 1), Conv3x3(3, 16, 10, 10, 16, 1, 1),
          Conv3x3(2, 48, 12, 12, 80, 1, 1), Conv3x3(1, 256, 14, 14, 256, 1, 1)}) {
      for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
        CheckProblem(s, MakeWinograd, rng, true, true, {}, false, p, 5e-4f);
        CheckProblem(s, MakeWinograd, rng, true, true, relu, true, p, 5e-4f);
        CheckProblem(s, MakeWinograd, rng, false, false, {}, true, p, 5e-4f);
      }
    }
  });
}

TEST(ConvWinograd, Applicability) {
  Conv2dShape s = Conv3x3(1, 8, 8, 8, 8, 1, 1);
  EXPECT_TRUE(WinogradConv::Applicable(s));
  s.stride_w = 2;
  EXPECT_FALSE(WinogradConv::Applicable(s));
  s.stride_w = 1;
  s.dilation_h = 2;
  EXPECT_FALSE(WinogradConv::Applicable(s));
  s.dilation_h = 1;
  s.group = 2;
  EXPECT_FALSE(WinogradConv::Applicable(s));
}

// ONYX_CONV_ALGO=direct takes Winograd away on the NCHWc path (the one optimized sessions
// use) as on the plain one, so its speed and rounding can be measured against direct.
TEST(ConvWinograd, NchwcChoiceFollowsForcedDirect) {
  const Conv2dShape s = Conv3x3(1, 64, 40, 40, 64, 1, 1);
  const char* old = std::getenv("ONYX_CONV_ALGO");
  const std::string saved = old != nullptr ? old : "";
  unsetenv("ONYX_CONV_ALGO");
  EXPECT_EQ(ChooseNchwcAlgorithm(s, false, false).algorithm, ConvAlgorithm::kWinograd);
  setenv("ONYX_CONV_ALGO", "direct", 1);
  const ConvChoice forced = ChooseNchwcAlgorithm(s, false, false);
  EXPECT_EQ(forced.algorithm, ConvAlgorithm::kDirect);
  EXPECT_STREQ(forced.why, "forced by ONYX_CONV_ALGO=direct");
  // Depthwise layers keep their engine: the switch is about Winograd here.
  Conv2dShape dw = s;
  dw.group = 64;
  EXPECT_EQ(ChooseNchwcAlgorithm(dw, false, false).algorithm, ConvAlgorithm::kDepthwise);
  if (old != nullptr) setenv("ONYX_CONV_ALGO", saved.c_str(), 1);
  else unsetenv("ONYX_CONV_ALGO");
}

// U = G g G^T of every filter, computed one filter at a time in double (the association the
// kernels use), must come out of each ISA's block kernel as the same floats, at the documented
// place: partial blocks of filters and of input channels included.
TEST(ConvWinograd, WeightTransformIsTheSameFloatsOnEveryIsa) {
  constexpr double kG[6][3] = {{1.0, 0.0, 0.0},       {1.0 / 3, 1.0 / 3, 1.0 / 3},     {-1.0 / 3, 1.0 / 3, -1.0 / 3},
                               {-16.0 / 15, -8.0 / 15, -4.0 / 15}, {1.0 / 15, -2.0 / 15, 4.0 / 15}, {0.0, 0.0, 1.0}};
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  ForEachIsa([&](const std::string&) {
    const ConvKernelTable& k = SelectedConvKernels();
    const int64_t b = k.block;
    for (int64_t filters : {b, b - 3}) {
      const int64_t channels = b + 5, in_blocks = 2, xi_stride = in_blocks * b * b;
      std::vector<float> w(static_cast<size_t>(filters * channels * 9));
      for (float& v : w) v = dist(rng);
      std::vector<float> out(static_cast<size_t>(36 * xi_stride), -7.0f);
      WinogradWeightsArgs args;
      args.w = w.data();
      args.filters = filters;
      args.in_channels = channels;
      args.xi_stride = xi_stride;
      args.out = out.data();
      k.winograd_weights(args);
      for (int64_t m = 0; m < filters; ++m)
        for (int64_t c = 0; c < channels; ++c) {
          const float* g = &w[static_cast<size_t>((m * channels + c) * 9)];
          for (int i = 0; i < 6; ++i)
            for (int kk = 0; kk < 6; ++kk) {
              double gt[3];
              for (int j = 0; j < 3; ++j) gt[j] = kG[i][0] * g[j] + kG[i][1] * g[3 + j] + kG[i][2] * g[6 + j];
              const auto want = static_cast<float>(gt[0] * kG[kk][0] + gt[1] * kG[kk][1] + gt[2] * kG[kk][2]);
              const float got = out[static_cast<size_t>((i * 6 + kk) * xi_stride + (c / b) * b * b + (c % b) * b + m)];
              ASSERT_EQ(got, want) << "filter " << m << " channel " << c << " element " << i * 6 + kk;
            }
        }
      // Lanes past the block's filters are not written (the caller zero-fills partial blocks).
      if (filters < b) {
        EXPECT_EQ(out[static_cast<size_t>(filters)], -7.0f);
      }
    }
  });
}

}  // namespace
}  // namespace onyx::linalg
