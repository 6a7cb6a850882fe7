// Q8GemmW (the weight-stationary int8 GEMM of NCHW convolutions) against Q8GemmReference on odd
// sizes: all four signedness pairs, weight zero points per row, per tensor or zero, strided X
// and C, K not a multiple of 4, pixels not a multiple of the tile, threads; the requantized
// output (per-row scale and bias, rounding half to even, saturation) against the formula applied
// here to the reference's int32 result. Runs where the CPU has AVX-512 VNNI.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "linalg/q8_gemm.h"
#include "linalg/isa_variant_test.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {
namespace {

struct Problem {
  int64_t m, n, k;
  bool w_signed, x_signed, zp_per_row;
  bool symmetric = false;  // weight zero points 0 (the path without their multiplies)
};

class Q8GemmWTest : public Q8VnniTest {};

void Check(const Problem& p, uint32_t seed, ThreadPool* pool = nullptr) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  const int64_t ldx = p.n + 3, ldc = p.n + 5;
  std::vector<uint8_t> w(static_cast<size_t>(p.m * p.k)), x(static_cast<size_t>(p.k * ldx));
  for (auto& v : w) v = static_cast<uint8_t>(byte(rng));
  for (auto& v : x) v = static_cast<uint8_t>(byte(rng));
  std::vector<int32_t> w_zp(static_cast<size_t>(p.zp_per_row ? p.m : 1));
  for (auto& z : w_zp) z = p.symmetric ? 0 : p.w_signed ? byte(rng) - 128 : byte(rng);
  const int32_t x_zp = p.x_signed ? -7 : 133;
  std::vector<int32_t> ref(static_cast<size_t>(p.m * p.n));
  Q8GemmReference(p.m, p.n, p.k, w.data(), p.w_signed, p.k, w_zp.data(), p.zp_per_row, false, x.data(), p.x_signed,
                  ldx, &x_zp, false, ref.data(), p.n);
  const PackedQ8W packed(p.m, p.k, w.data(), p.w_signed, w_zp.data(), p.zp_per_row);

  std::vector<int32_t> c(static_cast<size_t>(p.m * ldc), -1);
  Q8Output out;
  out.c = c.data();
  out.ldc = ldc;
  Q8GemmW(packed, p.n, x.data(), p.x_signed, ldx, x_zp, out, pool);
  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t j = 0; j < ldc; ++j) {
      const int32_t have = c[static_cast<size_t>(i * ldc + j)];
      if (j >= p.n) ASSERT_EQ(have, -1) << "wrote past N at " << i << ", " << j;
      else ASSERT_EQ(have, ref[static_cast<size_t>(i * p.n + j)]) << "at " << i << ", " << j;
    }

  std::vector<float> scale(static_cast<size_t>(p.m));
  std::vector<int32_t> bias(static_cast<size_t>(p.m));
  int64_t peak = 1;
  for (int32_t v : ref) peak = std::max<int64_t>(peak, std::abs(static_cast<int64_t>(v)));
  for (int64_t i = 0; i < p.m; ++i) {
    scale[static_cast<size_t>(i)] = static_cast<float>((90.0 + 13.0 * static_cast<double>(i % 11)) / peak);
    bias[static_cast<size_t>(i)] = static_cast<int32_t>((i * 7919) % 5000) - 2500;
  }
  for (bool out_signed : {false, true}) {
    std::vector<uint8_t> q(static_cast<size_t>(p.m * ldc), 0xAB);
    Q8Output o;
    o.kind = Q8Output::kQuantized;
    o.c = q.data();
    o.ldc = ldc;
    o.scale = scale.data();
    o.scale_per_column = true;
    o.bias_int = bias.data();
    o.zero_point = out_signed ? -4 : 117;
    o.out_signed = out_signed;
    Q8GemmW(packed, p.n, x.data(), p.x_signed, ldx, x_zp, o, pool);
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t j = 0; j < ldc; ++j) {
        const uint8_t have = q[static_cast<size_t>(i * ldc + j)];
        if (j >= p.n) {
          ASSERT_EQ(have, 0xAB) << "wrote past N";
          continue;
        }
        const auto si = static_cast<size_t>(i);
        const float f = static_cast<float>(ref[static_cast<size_t>(i * p.n + j)] + bias[si]) * scale[si];
        const float lo = out_signed ? -128.0f : 0.0f, hi = out_signed ? 127.0f : 255.0f;
        const auto expect =
            static_cast<int32_t>(std::min(std::max(std::nearbyint(f) + static_cast<float>(o.zero_point), lo), hi));
        ASSERT_EQ(out_signed ? static_cast<int8_t>(have) : have, expect) << "at " << i << ", " << j;
      }
  }
}

TEST_F(Q8GemmWTest, MatchesReferenceOnOddSizesAllSignedness) {
  uint32_t seed = 1;
  for (bool ws : {false, true})
    for (bool xs : {false, true})
      for (bool per_row : {false, true}) {
        Check({1, 1, 1, ws, xs, per_row}, seed++);
        Check({7, 33, 27, ws, xs, per_row}, seed++);
        Check({17, 64, 32, ws, xs, per_row}, seed++);
        Check({9, 95, 6, ws, xs, per_row}, seed++);
        Check({11, 45, 19, ws, xs, per_row, true}, seed++);
      }
}

TEST_F(Q8GemmWTest, LongKAndThreads) {
  ThreadPool pool(2);
  Check({40, 70, 963, false, false, true}, 101, &pool);
  Check({3, 200, 130, true, true, false}, 102, &pool);
}

// W past L2 and few pixels: the path that packs every X panel first and passes each W panel
// over all of them.
TEST_F(Q8GemmWTest, LargeWFewPixels) {
  Check({260, 70, 3201, true, false, true}, 104);
  ThreadPool pool(2);
  Check({263, 33, 3203, false, true, false}, 105, &pool);
}

// W within L2 but too few pixel panels for two threads (a 7x7 map): the rows are split, and the
// pixel panels are packed once up front instead of once a row chunk.
TEST_F(Q8GemmWTest, SmallWFewPixelsTwoThreads) {
  ThreadPool pool(2);
  Check({160, 49, 96, true, false, true}, 106, &pool);
  Check({72, 17, 35, false, true, false}, 107, &pool);
}

// A W no taller than deep with pixel panels enough for every thread (MobileNetV2's narrowing 1x1
// convs at 14x14 and 7x7): whole pixel panels per task, no row split, at 2 and 3 threads.
TEST_F(Q8GemmWTest, NarrowingWWholePixelPanels) {
  for (int threads : {2, 3}) {
    ThreadPool pool(threads);
    Check({64, 196, 384, true, false, true, true}, 108, &pool);
    Check({160, 49, 960, true, false, false}, 109, &pool);
    Check({24, 97, 35, false, true, true}, 110, &pool);
  }
}

TEST_F(Q8GemmWTest, EmptyK) { Check({5, 19, 0, true, false, true}, 103); }

}  // namespace
}  // namespace onyx::linalg
