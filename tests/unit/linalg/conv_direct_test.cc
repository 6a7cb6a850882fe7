// DirectConv (every ISA variant) against the plain reference convolution on many shapes: odd
// sizes, every padding / stride / dilation / group combination, pointwise and 1-D, NCHW and
// NCHWc, fused bias / residual / activation, one and two threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <thread>
#include <vector>

#include "linalg/conv.h"
#include "linalg/conv_test_util.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {
namespace {

using testing::CheckProblem;
using testing::ForEachIsa;

auto MakeDirect = [](const Conv2dShape& s, const float* w) { return DirectConv(s, w); };

Conv2dShape Shape(int64_t n, int64_t c, int64_t h, int64_t w, int64_t m, int64_t group, int64_t kh, int64_t kw,
                  int64_t stride = 1, int64_t dilation = 1, int64_t pad = 0) {
  Conv2dShape s;
  s.batch = n;
  s.in_channels = c;
  s.in_h = h;
  s.in_w = w;
  s.out_channels = m;
  s.group = group;
  s.kernel_h = kh;
  s.kernel_w = kw;
  s.stride_h = s.stride_w = stride;
  s.dilation_h = s.dilation_w = dilation;
  s.pad_top = s.pad_left = s.pad_bottom = s.pad_right = pad;
  EXPECT_TRUE(s.ComputeOutputSize());
  return s;
}

TEST(ConvDirect, NamedShapes) {
  std::mt19937 rng(1);
  const Conv2dShape shapes[] = {
      Shape(1, 3, 9, 11, 16, 1, 3, 3, 1, 1, 1),    // first-layer like, NCHW input with C < block
      Shape(1, 3, 15, 13, 24, 1, 7, 7, 2, 1, 3),   // 7x7 stride 2
      Shape(1, 16, 8, 8, 32, 1, 1, 1),            // pointwise
      Shape(2, 33, 5, 7, 65, 1, 1, 1),            // pointwise, ragged blocks, batch 2
      Shape(1, 32, 9, 9, 48, 1, 1, 1, 2),         // strided pointwise
      Shape(1, 17, 6, 10, 20, 1, 3, 3, 1, 2, 2),  // dilated
      Shape(1, 8, 4, 4, 8, 1, 5, 5, 1, 1, 4),     // pads larger than the input: some pixels see no tap
      Shape(1, 24, 7, 7, 36, 3, 3, 3, 1, 1, 1),   // grouped
      Shape(1, 64, 5, 6, 64, 4, 3, 3, 2, 1, 1),   // grouped, block-aligned groups (NCHWc too)
      Shape(1, 6, 7, 7, 12, 6, 3, 3, 1, 1, 1),    // depthwise with multiplier 2 through the direct path
      Shape(1, 5, 1, 30, 9, 1, 1, 5, 1, 1, 2),    // 1-D as height 1
      Shape(1, 4, 1, 1, 7, 1, 1, 1),              // single pixel
      Shape(1, 40, 3, 70, 70, 1, 3, 3, 1, 1, 1),  // rows longer than the staging segment
  };
  ForEachIsa([&](const std::string&) {
    for (const Conv2dShape& s : shapes) {
      CheckProblem(s, MakeDirect, rng, true, false, {}, false, nullptr, 1e-4f);
      const int b = ConvBlockSize();
      const bool blocked_ok = s.group == 1 || ((s.in_channels / s.group) % b == 0 && (s.out_channels / s.group) % b == 0);
      if (blocked_ok) CheckProblem(s, MakeDirect, rng, true, true, {}, true, nullptr, 1e-4f);
    }
  });
}

TEST(ConvDirect, RandomShapes) {
  std::mt19937 rng(7);
  auto pick = [&](std::initializer_list<int64_t> v) {
    return *(v.begin() + std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng));
  };
  ForEachIsa([&](const std::string&) {
    for (int iter = 0; iter < 120; ++iter) {
      Conv2dShape s;
      s.batch = pick({1, 1, 2});
      s.group = pick({1, 1, 1, 2, 3});
      s.in_channels = s.group * pick({1, 2, 3, 5, 8, 16, 17});
      s.out_channels = s.group * pick({1, 4, 8, 9, 16, 23, 32});
      s.kernel_h = pick({1, 2, 3, 5});
      s.kernel_w = pick({1, 3, 4, 5});
      s.stride_h = pick({1, 1, 2, 3});
      s.stride_w = pick({1, 1, 2, 3});
      s.dilation_h = pick({1, 1, 2});
      s.dilation_w = pick({1, 1, 2});
      s.pad_top = pick({0, 1, 2});
      s.pad_left = pick({0, 1, 2});
      s.pad_bottom = pick({0, 1, 3});
      s.pad_right = pick({0, 2});
      s.in_h = pick({1, 4, 7, 12});
      s.in_w = pick({1, 5, 9, 16, 23});
      if (!s.ComputeOutputSize()) continue;
      ConvActivation act;
      act.kind = static_cast<ConvActivation::Kind>(iter % 9);
      act.alpha = act.kind == ConvActivation::kClip ? -0.5f : 0.2f;
      act.beta = act.kind == ConvActivation::kClip ? 0.7f : 0.5f;
      CheckProblem(s, MakeDirect, rng, iter % 2 == 0, iter % 3 == 0, act, false, nullptr, 2e-4f);
    }
  });
}

TEST(ConvDirect, NchwcLayouts) {
  std::mt19937 rng(3);
  ForEachIsa([&](const std::string&) {
    for (int64_t c : {3, 16, 20, 32})
      for (int64_t k : {1, 3}) {
        const Conv2dShape s = Shape(2, c, 7, 9, 40, 1, k, k, k == 3 ? 2 : 1, 1, k / 2);
        ConvActivation relu;
        relu.kind = ConvActivation::kRelu;
        CheckProblem(s, MakeDirect, rng, true, true, relu, true, nullptr, 1e-4f);
      }
  });
}

TEST(ConvDirect, TwoThreads) {
  std::mt19937 rng(5);
  ThreadPool pool(2);
  ForEachIsa([&](const std::string&) {
    for (const Conv2dShape& s : {Shape(2, 16, 20, 20, 48, 1, 3, 3, 1, 1, 1), Shape(1, 64, 14, 14, 96, 1, 1, 1),
                                 Shape(1, 32, 15, 17, 64, 2, 3, 3, 2, 1, 1)}) {
      CheckProblem(s, MakeDirect, rng, true, true, {}, false, &pool, 1e-4f);
      CheckProblem(s, MakeDirect, rng, true, false, {}, true, &pool, 1e-4f);
    }
  });
}

// The padded (and blocked) copy of the input is split by rows among the threads: inputs big
// enough to be split, with one channel block (a few rows each for every thread), a ragged one,
// and NCHW planes that are blocked on the way (stride 2, as a first layer).
TEST(ConvDirect, PaddedInputCopiedByRowsAcrossThreads) {
  std::mt19937 rng(31);
  const Conv2dShape shapes[] = {
      Shape(1, 16, 64, 64, 32, 1, 3, 3, 1, 1, 1),  // one block on AVX-512
      Shape(2, 20, 48, 40, 16, 1, 3, 3, 1, 1, 2),  // a ragged second block, wide padding
      Shape(1, 3, 260, 60, 16, 1, 3, 3, 2, 1, 1),  // three NCHW planes (rows too short to read in place)
  };
  for (int threads : {2, 3}) {
    ThreadPool pool(threads);
    ForEachIsa([&](const std::string&) {
      for (const Conv2dShape& s : shapes) {
        CheckProblem(s, MakeDirect, rng, true, false, {}, true, &pool, 1e-4f);
        CheckProblem(s, MakeDirect, rng, false, false, {}, false, &pool, 1e-4f);
      }
    });
  }
}

// Few or ragged filter-block chunks (2, 3, 5 tasks) make the row split into equal column parts
// so that 2 and 3 threads get as many tasks each; parts must cover every pixel exactly once,
// with NCHW outputs (the staged strip) and NCHWc ones.
TEST(ConvDirect, RowPartsAcrossThreads) {
  std::mt19937 rng(21);
  const Conv2dShape shapes[] = {
      Shape(1, 24, 7, 7, 48, 1, 1, 1),     // 49 pixels, one or three chunks
      Shape(1, 40, 7, 7, 160, 1, 1, 1),    // 10 or 20 filter blocks: ragged chunks
      Shape(1, 32, 14, 14, 80, 1, 1, 1),   // 196 pixels: parts longer than a segment
      Shape(1, 16, 5, 100, 24, 1, 3, 3, 1, 1, 1),  // 100-pixel rows split inside a row, padded
      Shape(2, 16, 9, 9, 20, 1, 1, 1),     // batch 2, channels off the block
  };
  for (int threads : {2, 3}) {
    ThreadPool pool(threads);
    ForEachIsa([&](const std::string&) {
      for (const Conv2dShape& s : shapes) {
        CheckProblem(s, MakeDirect, rng, true, true, {}, false, &pool, 1e-4f);
        CheckProblem(s, MakeDirect, rng, true, true, {}, true, &pool, 1e-4f);
      }
    });
  }
}

// Short rows are grouped into segments whose register tiles span rows: each pixel of a tile
// reads its own window (row ends, padding, strides), and the output runs on across rows.
TEST(ConvDirect, TilesSpanningRows) {
  std::mt19937 rng(9);
  const Conv2dShape shapes[] = {
      Shape(1, 32, 7, 7, 64, 1, 3, 3, 1, 1, 1),    // ResNet stage 4 like: 49 pixels, four filter blocks
      Shape(1, 48, 14, 14, 40, 1, 3, 3, 1, 1, 1),  // 14-pixel rows, three ragged filter blocks
      Shape(1, 16, 9, 1, 32, 1, 3, 3, 1, 1, 1),    // 1-pixel rows
      Shape(2, 20, 11, 5, 70, 1, 3, 3, 2, 1, 1),   // stride 2, odd widths, channels off the block
      Shape(1, 24, 6, 9, 33, 1, 5, 3, 1, 2, 3),    // dilated, pads wider than the kernel reach
      Shape(1, 64, 7, 7, 128, 1, 1, 1),            // pointwise, flat
      Shape(1, 16, 13, 3, 16, 1, 1, 1, 2, 1, 1),   // padded strided pointwise (not flat)
  };
  ForEachIsa([&](const std::string&) {
    for (const Conv2dShape& s : shapes) {
      CheckProblem(s, MakeDirect, rng, true, true, {}, false, nullptr, 1e-4f);
      CheckProblem(s, MakeDirect, rng, true, true, {}, true, nullptr, 1e-4f);
    }
  });
}

// Pointwise projections with hundreds of input channels (MobileNetV2 like): the weights come in
// several input-channel chunks, so tiles accumulate onto y and only the last chunk adds the
// residual and clips (Relu6); ragged last chunks and blocks, one and two threads.
TEST(ConvDirect, ManyInputChunks) {
  std::mt19937 rng(13);
  ThreadPool pool(2);
  ConvActivation relu6;
  relu6.kind = ConvActivation::kClip;
  relu6.alpha = 0.0f;
  relu6.beta = 6.0f;
  const Conv2dShape shapes[] = {
      Shape(1, 576, 7, 7, 160, 1, 1, 1),   // 36 input blocks (AVX-512), 10 filter blocks
      Shape(1, 300, 5, 6, 40, 1, 1, 1),    // channels off the block, ragged filter blocks
      Shape(1, 960, 3, 3, 24, 1, 1, 1),    // many chunks, few pixels
      Shape(1, 144, 14, 14, 24, 1, 1, 1),  // 196 pixels: segments of 96, 96 and 4
  };
  ForEachIsa([&](const std::string&) {
    for (const Conv2dShape& s : shapes)
      for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
        CheckProblem(s, MakeDirect, rng, true, true, relu6, true, p, 2e-4f);
        CheckProblem(s, MakeDirect, rng, true, false, relu6, false, p, 2e-4f);
      }
  });
}

// Long reductions (1152 products per output) stay near the float64 answer: the tiles sum channel
// blocks in partial sums (kPartialSumTerms); one long float32 chain per output measured 2.5e-7
// (AVX2) and 3.8e-7 (scalar) here, against 2.0-2.1e-7 with the partial sums. Inputs have a
// positive mean, as after SiLU/ReLU, so the running sums grow as in real networks.
TEST(ConvDirect, LongReductionStaysNearFloat64) {
  const Conv2dShape s = Shape(1, 128, 10, 10, 64, 1, 3, 3, 1, 1, 1);
  std::mt19937 rng(21);
  std::normal_distribution<float> xd(0.3f, 0.5f), wd(0.0f, 0.05f);
  std::vector<float> x(static_cast<size_t>(128 * 100)), w(static_cast<size_t>(64 * 128 * 9));
  for (float& v : x) v = std::max(xd(rng), -0.27f);
  for (float& v : w) v = wd(rng);
  std::vector<double> want(static_cast<size_t>(64 * 100), 0.0);
  for (int64_t m = 0; m < 64; ++m)
    for (int64_t oh = 0; oh < 10; ++oh)
      for (int64_t ow = 0; ow < 10; ++ow) {
        double sum = 0.0;
        for (int64_t c = 0; c < 128; ++c)
          for (int64_t kh = 0; kh < 3; ++kh)
            for (int64_t kw = 0; kw < 3; ++kw) {
              const int64_t ih = oh + kh - 1, iw = ow + kw - 1;
              if (ih < 0 || ih >= 10 || iw < 0 || iw >= 10) continue;
              sum += double{x[static_cast<size_t>((c * 10 + ih) * 10 + iw)]} *
                     w[static_cast<size_t>(((m * 128 + c) * 3 + kh) * 3 + kw)];
            }
        want[static_cast<size_t>((m * 10 + oh) * 10 + ow)] = sum;
      }
  ForEachIsa([&](const std::string&) {
    const DirectConv engine(s, w.data());
    for (bool blocked : {false, true}) {
      const std::vector<float> got =
          testing::RunEngine(engine, s, x, nullptr, nullptr, ConvActivation{}, blocked, nullptr);
      double err = 0.0, norm = 0.0;
      for (size_t i = 0; i < want.size(); ++i) {
        err += (got[i] - want[i]) * (got[i] - want[i]);
        norm += want[i] * want[i];
      }
      EXPECT_LT(std::sqrt(err / norm), 2.4e-7) << (blocked ? "NCHWc" : "NCHW");
    }
  });
}

// Concurrent runs from several threads (each with its own padded input copy and staging strips).
TEST(ConvDirect, ConcurrentRuns) {
  ForEachIsa([&](const std::string&) {
    const Conv2dShape shapes[] = {Shape(1, 16, 12, 10, 32, 1, 3, 3, 1, 1, 1), Shape(1, 24, 9, 15, 20, 1, 5, 5, 2, 1, 2)};
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i)
      threads.emplace_back([&, i] {
        std::mt19937 rng(100 + i);
        for (int r = 0; r < 5; ++r)
          CheckProblem(shapes[(i + r) % 2], MakeDirect, rng, true, r % 2 == 0, {}, i % 2 == 0, nullptr, 1e-4f);
      });
    for (std::thread& t : threads) t.join();
  });
}

TEST(ConvIsa, ForceIsaRejectsUnknownAndKeepsChoice) {
  const std::string before = ConvIsa();
  EXPECT_FALSE(ForceConvIsa("sse9"));
  EXPECT_EQ(ConvIsa(), before);
  EXPECT_TRUE(ForceConvIsa("scalar"));
  EXPECT_EQ(ConvIsa(), "scalar");
  EXPECT_EQ(ConvBlockSize(), 8);
  EXPECT_TRUE(ForceConvIsa("auto"));
  EXPECT_EQ(SupportedConvIsas().back(), "scalar");
  EXPECT_EQ(ConvIsa(), SupportedConvIsas().front());
}

TEST(ConvEpilogue, VectorActivationsMatchScalar) {
  std::mt19937 rng(11);
  std::vector<float> base = testing::RandomVector(1000, rng, -30.0f, 30.0f);
  for (float v : {0.0f, -0.0f, 1e-6f, -1e-6f, 88.0f, -88.0f, 100.0f, -100.0f, 0.5f}) base.push_back(v);
  const std::vector<float> residual = testing::RandomVector(base.size(), rng);
  ForEachIsa([&](const std::string&) {
    for (int kind = 0; kind < 9; ++kind) {
      ConvActivation act;
      act.kind = static_cast<ConvActivation::Kind>(kind);
      act.alpha = kind == ConvActivation::kClip ? -2.0f : 0.3f;
      act.beta = kind == ConvActivation::kClip ? 6.0f : 0.4f;
      std::vector<float> y = base;
      ApplyConvEpilogue(y.data(), 1, 1, static_cast<int64_t>(y.size()), nullptr, residual.data(), act, nullptr);
      for (size_t i = 0; i < y.size(); ++i) {
        const float want = ActivateScalar(base[i] + residual[i], act);
        ASSERT_NEAR(y[i], want, 2e-6f + 2e-6f * std::fabs(want)) << "kind " << kind << " x " << base[i] + residual[i];
      }
    }
  });
}

// Sigmoid and SiLU (reciprocal estimate + Newton step, short exp polynomial) stay within 1e-6
// relative of the double-precision values across the whole range where sigmoid is a normal float.
TEST(ConvEpilogue, SigmoidAndSiluRelativeAccuracy) {
  std::vector<float> base;
  for (float v = -87.0f; v <= 87.0f; v += 0.0137f) base.push_back(v);
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-6f, -1e-6f, 0.34657f, -0.34657f, 0.5f, -0.5f}) base.push_back(v);
  ForEachIsa([&](const std::string& isa) {
    for (const auto kind : {ConvActivation::kSigmoid, ConvActivation::kSilu}) {
      ConvActivation act;
      act.kind = kind;
      std::vector<float> y = base;
      ApplyConvEpilogue(y.data(), 1, 1, static_cast<int64_t>(y.size()), nullptr, nullptr, act, nullptr);
      for (size_t i = 0; i < y.size(); ++i) {
        const double x = base[i], sig = 1.0 / (1.0 + std::exp(-x));
        const double want = kind == ConvActivation::kSilu ? x * sig : sig;
        ASSERT_LE(std::fabs(y[i] - want), 1e-6 * std::fabs(want) + 1e-44)
            << isa << " kind " << kind << " x " << base[i] << " got " << y[i] << " want " << want;
      }
    }
  });
}

TEST(ConvReorder, NchwcRoundTrip) {
  std::mt19937 rng(2);
  ForEachIsa([&](const std::string&) {
    const int b = ConvBlockSize();
    for (int64_t c : {1, 7, 16, 19})
      for (int64_t pixels : {1, 5, 16, 37}) {
        const std::vector<float> x = testing::RandomVector(static_cast<size_t>(2 * c * pixels), rng);
        const int64_t blocks = (c + b - 1) / b;
        std::vector<float> xb(static_cast<size_t>(2 * blocks * b * pixels), 99.0f), back(x.size());
        ReorderToNchwc(x.data(), 2, c, pixels, b, xb.data(), nullptr);
        for (int64_t n = 0; n < 2; ++n)
          for (int64_t ch = 0; ch < blocks * b; ++ch)
            for (int64_t p = 0; p < pixels; ++p) {
              const float got = xb[((n * blocks + ch / b) * pixels + p) * b + ch % b];
              EXPECT_EQ(got, ch < c ? x[(n * c + ch) * pixels + p] : 0.0f);
            }
        ReorderFromNchwc(xb.data(), 2, c, pixels, b, back.data(), nullptr);
        EXPECT_EQ(back, x);
      }
  });
}

}  // namespace
}  // namespace onyx::linalg
