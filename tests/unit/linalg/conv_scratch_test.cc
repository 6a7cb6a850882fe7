// ConvScratch: a slot's buffer is kept from one lease to the next on a thread, nested leases of
// one slot and oversized ones get their own memory; and the engines that lease buffers stay
// exact when those buffers hold garbage from an earlier lease (nothing is read unwritten).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <thread>

#include "linalg/conv.h"
#include "linalg/conv_scratch.h"
#include "linalg/conv_test_util.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {
namespace {

bool Aligned64(const float* p) { return reinterpret_cast<uintptr_t>(p) % 64 == 0; }

TEST(ConvScratch, KeptPerSlotAndThread) {
  const float* first = nullptr;
  {
    ConvScratch a(ScratchSlot::kTaskA, 1000);
    first = a.get();
    EXPECT_TRUE(Aligned64(first));
    a.get()[999] = 1.0f;
  }
  {
    ConvScratch again(ScratchSlot::kTaskA, 800);  // smaller: the same buffer
    EXPECT_EQ(again.get(), first);
    ConvScratch nested(ScratchSlot::kTaskA, 800);  // the slot is leased: other memory
    EXPECT_NE(nested.get(), first);
    ConvScratch other(ScratchSlot::kTaskB, 800);
    EXPECT_NE(other.get(), first);
    EXPECT_NE(other.get(), nested.get());
  }
  // Another thread has its own buffer for the slot, even while this thread's is leased.
  ConvScratch mine(ScratchSlot::kTaskA, 1000);
  EXPECT_EQ(mine.get(), first);
  const float* theirs = nullptr;
  std::thread([&] {
    ConvScratch t(ScratchSlot::kTaskA, 1000);
    theirs = t.get();
    t.get()[0] = 2.0f;
  }).join();
  EXPECT_NE(theirs, first);
}

TEST(ConvScratch, OversizedLeasesAreNotKept) {
  const size_t big = ConvScratch::kMaxKeptBytes / sizeof(float) + 16;
  ConvScratch a(ScratchSlot::kTaskC, big);
  ASSERT_NE(a.get(), nullptr);
  EXPECT_TRUE(Aligned64(a.get()));
  a.get()[big - 1] = 1.0f;
  // The slot itself stays free for a kept lease.
  ConvScratch b(ScratchSlot::kTaskC, 64);
  ConvScratch c(ScratchSlot::kTaskC, 64);
  EXPECT_NE(b.get(), c.get());
}

// Fills every slot's kept buffer with NaN, so an engine that reads a float it did not write
// produces NaN.
void PoisonSlots(size_t floats) {
  for (int i = 0; i < static_cast<int>(ScratchSlot::kCount); ++i) {
    ConvScratch s(static_cast<ScratchSlot>(i), floats);
    std::fill_n(s.get(), floats, std::numeric_limits<float>::quiet_NaN());
  }
}

Conv2dShape Shape(int64_t c, int64_t h, int64_t w, int64_t m, int64_t group, int64_t k, int64_t stride, int64_t pad) {
  Conv2dShape s;
  s.batch = 1;
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

TEST(ConvScratch, EnginesIgnoreStaleScratch) {
  std::mt19937 rng(7);
  ThreadPool pool(2);
  ConvActivation relu;
  relu.kind = ConvActivation::kRelu;
  testing::ForEachIsa([&](const std::string&) {
    for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
      for (bool blocked : {false, true}) {
        // Padded direct (its padded input copy), Winograd with NCHW output (its strips and a
        // padding row), depthwise on short rows (the transposed path's buffers).
        PoisonSlots(1 << 16);
        testing::CheckProblem(Shape(20, 9, 13, 24, 1, 3, 1, 1), [](const Conv2dShape& s, const float* w) {
          return DirectConv(s, w);
        }, rng, true, false, relu, blocked, p, 1e-4f);
        PoisonSlots(1 << 16);
        testing::CheckProblem(Shape(16, 12, 10, 32, 1, 3, 1, 1), [](const Conv2dShape& s, const float* w) {
          return WinogradConv(s, w);
        }, rng, true, true, relu, blocked, p, 1e-3f);
        PoisonSlots(1 << 16);
        testing::CheckProblem(Shape(32, 7, 7, 32, 32, 3, 1, 1), [](const Conv2dShape& s, const float* w) {
          return DepthwiseConv(s, w);
        }, rng, true, false, relu, blocked, p, 1e-4f);
      }
    }
  });
}

}  // namespace
}  // namespace onyx::linalg
