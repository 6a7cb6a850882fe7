// Q8GemmW's requantized output at the edges of its two-rows-at-a-time epilogue (int16 packs then
// bytes): zero points at both ends of the output type, scales that saturate both ways, odd row
// counts (a last row without a partner), every column count of a tile, per-tensor and per-row
// scales, with and without bias (folded into the accumulators' start), 1 and 2 threads; against
// Q8GemmReference's int32 result with the formula applied here. AVX-512 VNNI only (where Q8GemmW is).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "linalg/isa_variant_test.h"
#include "linalg/q8_gemm.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {
namespace {

class Q8GemmWRequantTest : public Q8VnniTest {};

struct Case {
  int64_t m, n, k;
  bool out_signed;
  int32_t zero_point;
  double gain;  // output scale times the largest |sum|: > 255 saturates
  bool per_row, with_bias;
};

void Check(const Case& t, uint32_t seed, ThreadPool* pool) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<uint8_t> w(static_cast<size_t>(t.m * t.k)), x(static_cast<size_t>(t.k * t.n));
  for (auto& v : w) v = static_cast<uint8_t>(byte(rng));
  for (auto& v : x) v = static_cast<uint8_t>(byte(rng));
  const int32_t w_zp = 0, x_zp = 9;  // int8 W, symmetric (the models' case); uint8 X
  std::vector<int32_t> ref(static_cast<size_t>(t.m * t.n));
  Q8GemmReference(t.m, t.n, t.k, w.data(), true, t.k, &w_zp, false, false, x.data(), false, t.n, &x_zp, false,
                  ref.data(), t.n);
  const PackedQ8W packed(t.m, t.k, w.data(), true, &w_zp, false);
  int64_t peak = 1;
  for (int32_t v : ref) peak = std::max<int64_t>(peak, std::abs(static_cast<int64_t>(v)));
  std::vector<float> scale(static_cast<size_t>(t.per_row ? t.m : 1));
  for (size_t i = 0; i < scale.size(); ++i) scale[i] = static_cast<float>(t.gain * (1.0 + 0.1 * (i % 5)) / peak);
  std::vector<int32_t> bias(static_cast<size_t>(t.m));
  for (int64_t i = 0; i < t.m; ++i) bias[static_cast<size_t>(i)] = static_cast<int32_t>((i * 7919) % 4001) - 2000;
  const int64_t ldc = t.n + 3;
  std::vector<uint8_t> q(static_cast<size_t>(t.m * ldc), 0xAB);
  Q8Output o;
  o.kind = Q8Output::kQuantized;
  o.c = q.data();
  o.ldc = ldc;
  o.scale = scale.data();
  o.scale_per_column = t.per_row;
  o.bias_int = t.with_bias ? bias.data() : nullptr;
  o.zero_point = t.zero_point;
  o.out_signed = t.out_signed;
  Q8GemmW(packed, t.n, x.data(), false, t.n, x_zp, o, pool);
  const float lo = t.out_signed ? -128.0f : 0.0f, hi = t.out_signed ? 127.0f : 255.0f;
  for (int64_t i = 0; i < t.m; ++i)
    for (int64_t j = 0; j < ldc; ++j) {
      const uint8_t have = q[static_cast<size_t>(i * ldc + j)];
      if (j >= t.n) {
        ASSERT_EQ(have, 0xAB) << "wrote past N at " << i << ", " << j;
        continue;
      }
      const int32_t acc = ref[static_cast<size_t>(i * t.n + j)] + (t.with_bias ? bias[static_cast<size_t>(i)] : 0);
      const float f = static_cast<float>(acc) * scale[t.per_row ? static_cast<size_t>(i) : 0];
      const float rounded = std::nearbyint(f) + static_cast<float>(t.zero_point);
      const auto expect = static_cast<int32_t>(std::min(std::max(rounded, lo), hi));
      ASSERT_EQ(t.out_signed ? static_cast<int32_t>(static_cast<int8_t>(have)) : static_cast<int32_t>(have), expect)
          << "row " << i << " of " << t.m << ", column " << j << " of " << t.n << ", zero point " << t.zero_point;
    }
}

TEST_F(Q8GemmWRequantTest, ZeroPointsAtTheEndsAndSaturation) {
  ThreadPool pool(2);
  uint32_t seed = 1;
  for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool})
    for (bool out_signed : {false, true})
      for (int32_t zp : out_signed ? std::vector<int32_t>{-128, -1, 127} : std::vector<int32_t>{0, 128, 255})
        for (double gain : {100.0, 700.0}) {
          Check({9, 45, 24, out_signed, zp, gain, true, true}, seed++, p);
          Check({16, 64, 67, out_signed, zp, gain, false, false}, seed++, p);
        }
}

TEST_F(Q8GemmWRequantTest, EveryColumnCountAndOddRows) {
  uint32_t seed = 100;
  for (int64_t n = 1; n <= 33; ++n) Check({1 + n % 9, n, 16, n % 2 == 0, 3, 300.0, true, true}, seed++, nullptr);
}

}  // namespace
}  // namespace onyx::linalg
