// Q8MaxPool2dU8 / Q8MaxPool2dS8 (MaxPool on 8-bit codes) for every ISA variant against a plain
// loop over each window's taps: kernels, strides, dilations and paddings of ResNet-like and odd
// shapes (output heights that leave a partial batch of rows, input rows past one and two vector
// blocks), windows that lie wholly in the padding (the lowest code), and scratch filled with
// garbage first.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "linalg/gemm.h"
#include "linalg/isa_variant_test.h"
#include "linalg/q8_pool.h"

namespace onyx::linalg {
namespace {

class Q8PoolVariant : public LinalgIsaVariant {};

template <typename T>
std::vector<T> Reference(const Q8PoolGeometry& g, const std::vector<T>& x) {
  std::vector<T> y(static_cast<size_t>(g.out_h * g.out_w), std::numeric_limits<T>::lowest());
  for (int64_t oy = 0; oy < g.out_h; ++oy)
    for (int64_t ox = 0; ox < g.out_w; ++ox)
      for (int64_t ky = 0; ky < g.kernel_h; ++ky)
        for (int64_t kx = 0; kx < g.kernel_w; ++kx) {
          const int64_t iy = oy * g.stride_h - g.pad_top + ky * g.dilation_h;
          const int64_t ix = ox * g.stride_w - g.pad_left + kx * g.dilation_w;
          if (iy < 0 || iy >= g.in_h || ix < 0 || ix >= g.in_w) continue;
          T& o = y[static_cast<size_t>(oy * g.out_w + ox)];
          o = std::max(o, x[static_cast<size_t>(iy * g.in_w + ix)]);
        }
  return y;
}

// in, kernel, stride, dilation, pad begin, pad end (same for both dims except in_w = in_h + 3).
struct Case {
  int64_t in, kernel, stride, dilation, pad_begin, pad_end;
};

template <typename T>
void Check(void (*pool)(const Q8PoolGeometry&, const T*, T*, T*)) {
  const Case cases[] = {{112, 3, 2, 1, 1, 1}, {56, 3, 1, 1, 1, 1}, {13, 2, 2, 1, 0, 0}, {9, 3, 3, 2, 2, 2},
                        {7, 5, 1, 1, 2, 2},   {1, 1, 1, 1, 0, 0},  {5, 3, 2, 1, 0, 1},  {20, 4, 3, 3, 3, 4},
                        {3, 7, 2, 1, 4, 4},   {70, 2, 2, 1, 1, 1}, {100, 3, 1, 2, 2, 2}, {131, 3, 2, 1, 1, 1}};
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> code(std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max());
  for (const Case& c : cases) {
    Q8PoolGeometry g;
    g.in_h = c.in, g.in_w = c.in + 3;
    g.kernel_h = g.kernel_w = c.kernel;
    g.stride_h = g.stride_w = c.stride;
    g.dilation_h = g.dilation_w = c.dilation;
    g.pad_top = g.pad_left = c.pad_begin;
    const int64_t reach = (c.kernel - 1) * c.dilation + 1;
    g.out_h = (g.in_h + c.pad_begin + c.pad_end - reach) / c.stride + 1;
    g.out_w = (g.in_w + c.pad_begin + c.pad_end - reach) / c.stride + 1;
    std::vector<T> x(static_cast<size_t>(g.in_h * g.in_w));
    for (T& v : x) v = static_cast<T>(code(rng));
    std::vector<T> scratch(static_cast<size_t>(Q8MaxPool2dScratch(g)));
    for (T& v : scratch) v = static_cast<T>(code(rng));
    std::vector<T> y(static_cast<size_t>(g.out_h * g.out_w));
    pool(g, x.data(), y.data(), scratch.data());
    const std::vector<T> want = Reference(g, x);
    for (size_t i = 0; i < y.size(); ++i)
      ASSERT_EQ(int(y[i]), int(want[i])) << "in " << c.in << " kernel " << c.kernel << " stride " << c.stride
                                         << " dilation " << c.dilation << " pad " << c.pad_begin << " output " << i;
  }
}

TEST_P(Q8PoolVariant, MaxPoolU8MatchesLoop) { Check<uint8_t>(&Q8MaxPool2dU8); }

TEST_P(Q8PoolVariant, MaxPoolS8MatchesLoop) { Check<int8_t>(&Q8MaxPool2dS8); }

INSTANTIATE_TEST_SUITE_P(AllIsas, Q8PoolVariant, ::testing::Values("avx512", "avx2", "scalar"),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace onyx::linalg
