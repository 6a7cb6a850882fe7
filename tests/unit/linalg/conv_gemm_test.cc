// GemmConv (the packed SGEMM, every SGEMM ISA, with the convolution epilogue) against the plain
// reference: pointwise convolutions straight on the input, im2col for every other window,
// groups, batches, column tiles, every activation (HardSwish after the GEMM), two threads.
#include <gtest/gtest.h>

#include <random>

#include "linalg/conv.h"
#include "linalg/conv_test_util.h"
#include "linalg/gemm.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {
namespace {

using testing::CheckProblem;

auto MakeGemm = [](const Conv2dShape& s, const float* w) { return GemmConv(s, w); };

template <typename Fn>
void ForEachGemmIsa(Fn&& fn) {
  for (const std::string& isa : SupportedSgemmIsas()) {
    SCOPED_TRACE("sgemm isa " + isa);
    ASSERT_TRUE(ForceIsa(isa));
    fn();
  }
  ForceIsa("auto");
}

Conv2dShape Shape(int64_t n, int64_t c, int64_t h, int64_t w, int64_t m, int64_t group, int64_t k, int64_t stride,
                  int64_t pad, int64_t dilation = 1) {
  Conv2dShape s;
  s.batch = n;
  s.in_channels = c;
  s.in_h = h;
  s.in_w = w;
  s.out_channels = m;
  s.group = group;
  s.kernel_h = s.kernel_w = k;
  s.stride_h = s.stride_w = stride;
  s.dilation_h = s.dilation_w = dilation;
  s.pad_top = s.pad_left = pad;
  s.pad_bottom = s.pad_right = pad + 1;
  EXPECT_TRUE(s.ComputeOutputSize());
  return s;
}

TEST(ConvGemm, ShapesAndEpilogues) {
  std::mt19937 rng(3);
  ThreadPool pool(2);
  const Conv2dShape shapes[] = {
      Shape(1, 24, 14, 15, 40, 1, 1, 1, 0),  // pads make it non-pointwise: im2col of a 1x1 window
      Shape(2, 16, 9, 9, 33, 1, 3, 2, 1),
      Shape(1, 12, 11, 7, 18, 3, 3, 1, 1, 2),
      Shape(1, 3, 30, 30, 8, 1, 5, 1, 2),
  };
  Conv2dShape pointwise = Shape(2, 33, 10, 13, 65, 1, 1, 1, 0);
  pointwise.pad_bottom = pointwise.pad_right = 0;
  ASSERT_TRUE(pointwise.ComputeOutputSize());
  ForEachGemmIsa([&] {
    for (int kind = 0; kind < 9; ++kind) {
      ConvActivation act;
      act.kind = static_cast<ConvActivation::Kind>(kind);
      act.alpha = kind == ConvActivation::kClip ? -0.4f : 0.2f;
      act.beta = kind == ConvActivation::kClip ? 0.9f : 0.5f;
      CheckProblem(pointwise, MakeGemm, rng, kind % 2 == 0, kind % 3 != 1, act, false, kind % 2 ? &pool : nullptr,
                   1e-4f);
      for (const Conv2dShape& s : shapes)
        CheckProblem(s, MakeGemm, rng, true, kind % 2 == 1, act, false, kind % 2 ? nullptr : &pool, 1e-4f);
    }
  });
}

TEST(ConvGemm, LargeImageUsesSeveralColumnTiles) {
  std::mt19937 rng(5);
  const Conv2dShape s = Shape(1, 64, 90, 90, 16, 1, 3, 1, 1);  // k = 576: tiles of ~900 columns
  CheckProblem(s, MakeGemm, rng, true, true, {}, false, nullptr, 1e-4f);
}

}  // namespace
}  // namespace onyx::linalg
