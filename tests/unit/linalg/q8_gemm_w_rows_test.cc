// Q8GemmWRows (a task's share of a weight-stationary int8 GEMM's output channels: the dynamic
// conv's code links split a pointwise conv by W's 8-row panels) against Q8GemmW over all of W:
// every row of the slice bit for bit, the rows outside it untouched, and a kFloat range over the
// slices that merges to the whole call's. int32, requantized and float outputs; odd M, K and N;
// per-row weight zero points (the pixel sums); W past L2 (the path that packs every X panel
// first); one thread and two. Refuses a slice that does not start on a panel or ends past M.
// Runs where the CPU has AVX-512 VNNI.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

#include "linalg/isa_variant_test.h"
#include "linalg/q8_gemm.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {
namespace {

class Q8GemmWRowsTest : public Q8VnniTest {};

struct Shape3 {
  int64_t m, k, n;
};

template <typename T>
std::vector<T> Random(size_t count, uint32_t seed, int lo, int hi) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<T> v(count);
  for (auto& x : v) x = static_cast<T>(d(rng));
  return v;
}

// Runs one output kind over all rows and over the slices [0, 8), [8, 24), [24, M) (clipped), with
// C of element type T and leading dimension n + 3, and compares bytes.
template <typename T>
void CompareSlices(const Shape3& s, Q8Output::Kind kind, ThreadPool* pool) {
  const std::vector<int8_t> w = Random<int8_t>(static_cast<size_t>(s.m * s.k), 1, -127, 127);
  std::vector<int32_t> w_zp(static_cast<size_t>(s.m));
  for (int64_t i = 0; i < s.m; ++i) w_zp[static_cast<size_t>(i)] = static_cast<int32_t>(i % 5) - 2;
  const PackedQ8W packed(s.m, s.k, w.data(), true, w_zp.data(), true);
  const std::vector<uint8_t> x = Random<uint8_t>(static_cast<size_t>(s.k * s.n), 2, 0, 255);
  std::vector<float> scale(static_cast<size_t>(s.m)), bias(static_cast<size_t>(s.m));
  std::vector<int32_t> bias_int(static_cast<size_t>(s.m));
  for (int64_t i = 0; i < s.m; ++i) {
    scale[static_cast<size_t>(i)] = 1e-4f * static_cast<float>(1 + i % 7);
    bias[static_cast<size_t>(i)] = 0.25f * static_cast<float>(i % 9) - 1.0f;
    bias_int[static_cast<size_t>(i)] = static_cast<int32_t>(i * 37 % 2001) - 1000;
  }
  const int64_t ldc = s.n + 3;
  Q8Output o;
  o.kind = kind;
  o.ldc = ldc;
  o.scale = scale.data();
  o.scale_per_column = true;
  if (kind == Q8Output::kQuantized) o.bias_int = bias_int.data(), o.zero_point = 100;
  if (kind == Q8Output::kFloat) o.bias = bias.data(), o.lo = -3.0f, o.hi = 4.0f;
  const int32_t x_zp = 113;
  std::vector<T> whole(static_cast<size_t>(s.m * ldc), T{7});
  float whole_range[2] = {0.0f, 0.0f};
  o.c = whole.data();
  o.range = kind == Q8Output::kFloat ? whole_range : nullptr;
  Q8GemmW(packed, s.n, x.data(), false, s.n, x_zp, o, pool);
  std::vector<T> sliced(static_cast<size_t>(s.m * ldc), T{7});
  float merged[2] = {0.0f, 0.0f};
  const T kUnwritten{7};
  const int64_t bounds[] = {0, std::min<int64_t>(8, s.m), std::min<int64_t>(24, s.m), s.m};
  for (int b = 0; b < 3; ++b) {
    const int64_t r0 = bounds[b], r1 = bounds[b + 1];
    std::vector<T> alone(static_cast<size_t>(s.m * ldc), T{7});
    float range[2] = {0.0f, 0.0f};
    o.c = alone.data();
    o.range = kind == Q8Output::kFloat ? range : nullptr;
    Q8GemmWRows(packed, r0, r1, s.n, x.data(), false, s.n, x_zp, o, pool);
    for (int64_t i = 0; i < s.m; ++i) {
      const bool inside = i >= r0 && i < r1;
      for (int64_t j = 0; j < ldc; ++j) {
        const size_t at = static_cast<size_t>(i * ldc + j);
        if (!inside || j >= s.n) {
          ASSERT_EQ(std::memcmp(&alone[at], &kUnwritten, sizeof(T)), 0)
              << "wrote row " << i << " col " << j << " outside rows [" << r0 << ", " << r1 << ")";
          continue;
        }
        sliced[at] = alone[at];
      }
    }
    merged[0] = std::min(merged[0], range[0]);
    merged[1] = std::max(merged[1], range[1]);
  }
  ASSERT_EQ(std::memcmp(sliced.data(), whole.data(), whole.size() * sizeof(T)), 0) << "slices differ from the whole";
  if (kind == Q8Output::kFloat) {
    EXPECT_EQ(merged[0], whole_range[0]);
    EXPECT_EQ(merged[1], whole_range[1]);
    EXPECT_LT(whole_range[0], 0.0f);
    EXPECT_GT(whole_range[1], 0.0f);
  }
}

void CompareAll(const Shape3& s, ThreadPool* pool) {
  CompareSlices<int32_t>(s, Q8Output::kInt32, pool);
  CompareSlices<uint8_t>(s, Q8Output::kQuantized, pool);
  CompareSlices<float>(s, Q8Output::kFloat, pool);
}

TEST_F(Q8GemmWRowsTest, SlicesEqualTheWholeOddSizes) {
  CompareAll({45, 37, 83}, nullptr);
  CompareAll({19, 5, 16}, nullptr);  // one 16-pixel panel, K below a group of 4
}

TEST_F(Q8GemmWRowsTest, SlicesEqualTheWholeWithThreads) {
  ThreadPool pool(2);
  CompareAll({45, 37, 83}, &pool);
  CompareAll({64, 96, 200}, &pool);
}

TEST_F(Q8GemmWRowsTest, SlicesEqualTheWholeWPastL2) {
  ThreadPool pool(2);
  CompareSlices<float>({1283, 960, 49}, Q8Output::kFloat, &pool);  // 1.2 MB of W, few pixels
}

TEST_F(Q8GemmWRowsTest, RefusesSlicesOffThePanels) {
  const std::vector<int8_t> w(24 * 4, 1);
  const PackedQ8W packed(24, 4, w.data(), true, nullptr, false);
  std::vector<uint8_t> x(4 * 8, 1);
  std::vector<int32_t> c(24 * 8);
  Q8Output o;
  o.c = c.data();
  o.ldc = 8;
  EXPECT_THROW(Q8GemmWRows(packed, 4, 16, 8, x.data(), false, 8, 0, o, nullptr), std::invalid_argument);
  EXPECT_THROW(Q8GemmWRows(packed, 8, 25, 8, x.data(), false, 8, 0, o, nullptr), std::invalid_argument);
  EXPECT_THROW(Q8GemmWRows(packed, -8, 8, 8, x.data(), false, 8, 0, o, nullptr), std::invalid_argument);
  EXPECT_NO_THROW(Q8GemmWRows(packed, 16, 16, 8, x.data(), false, 8, 0, o, nullptr));  // empty
}

}  // namespace
}  // namespace onyx::linalg
