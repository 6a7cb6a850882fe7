// Q8SoftmaxRows (linalg/q8_softmax.h): each variant against a reference written from the formula
// (row maximum, the shifted table, the sum in element order, nearbyint of e * y_mult / sum),
// uint8 and int8, 1 to 16 rows, row lengths around the vector widths (tails are masked), rows of
// close and far codes (the AVX-512 lookup reads only the table blocks a row reaches); sentinels
// after y catch writes past the rows, and rows with a zero sum write nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "linalg/gemm.h"
#include "linalg/isa_variant_test.h"
#include "linalg/q8_softmax.h"

namespace onyx::linalg {
namespace {

using SoftmaxFn = bool (*)(const uint8_t*, int64_t, int64_t, bool, const float*, float, int32_t, float*, uint8_t*);

std::vector<uint8_t> Reference(const std::vector<uint8_t>& x, int64_t rows, int64_t D, bool is_signed,
                               const float* table, float y_mult, int32_t zy) {
  std::vector<uint8_t> y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    auto code = [&](int64_t i) {
      const uint8_t b = x[static_cast<size_t>(r * D + i)];
      return is_signed ? static_cast<int32_t>(static_cast<int8_t>(b)) : static_cast<int32_t>(b);
    };
    int32_t mx = is_signed ? -128 : 0;
    for (int64_t i = 0; i < D; ++i) mx = std::max(mx, code(i));
    float sum = 0.0f;
    for (int64_t i = 0; i < D; ++i) sum += table[255 - (mx - code(i))];
    for (int64_t i = 0; i < D; ++i) {
      const float e = table[255 - (mx - code(i))];
      const int32_t q = static_cast<int32_t>(std::nearbyint((e * y_mult) / sum)) + zy;
      y[static_cast<size_t>(r * D + i)] =
          static_cast<uint8_t>(is_signed ? std::clamp(q, -128, 127) : std::clamp(q, 0, 255));
    }
  }
  return y;
}

void CheckSoftmax(SoftmaxFn fn) {
  std::mt19937 rng(11);
  for (bool is_signed : {false, true}) {
    for (float sx : {0.02f, 0.09f, 0.3f}) {
      float table[256];
      for (int i = 0; i < 256; ++i) table[i] = static_cast<float>(std::exp((i - 255) * static_cast<double>(sx)));
      const float y_mult = 255.0f;
      const int32_t zy = is_signed ? -128 : 0;
      for (int64_t D : {1, 5, 15, 16, 17, 33, 64, 65, 128, 200}) {
        for (int64_t rows : {1, 3, 16}) {
          for (int spread : {1, 20, 40, 100, 200, 256}) {
            std::vector<uint8_t> x(static_cast<size_t>(rows * D));
            const uint32_t base = rng() % 256;
            for (auto& v : x) v = static_cast<uint8_t>(base + rng() % spread);
            std::vector<float> scratch(static_cast<size_t>(rows * D));
            std::vector<uint8_t> y(x.size() + 64, 0xA5);
            ASSERT_TRUE(fn(x.data(), rows, D, is_signed, table, y_mult, zy, scratch.data(), y.data()));
            const auto want = Reference(x, rows, D, is_signed, table, y_mult, zy);
            for (size_t i = 0; i < want.size(); ++i)
              ASSERT_EQ(y[i], want[i]) << "signed " << is_signed << " sx " << sx << " D " << D << " rows " << rows
                                       << " spread " << spread << " at " << i;
            for (size_t i = want.size(); i < y.size(); ++i) ASSERT_EQ(y[i], 0xA5) << "wrote past the rows";
          }
        }
      }
    }
  }
}

void CheckZeroSumWritesNothing(SoftmaxFn fn) {
  // A table of zeros: every row sums to 0.
  const float table[256] = {};
  std::vector<uint8_t> x(3 * 20, 7), y(x.size(), 0xA5);
  std::vector<float> scratch(x.size());
  EXPECT_FALSE(fn(x.data(), 3, 20, false, table, 255.0f, 0, scratch.data(), y.data()));
  EXPECT_TRUE(std::all_of(y.begin(), y.end(), [](uint8_t v) { return v == 0xA5; }));
}

class Q8SoftmaxVariant : public LinalgIsaVariant {};

TEST_P(Q8SoftmaxVariant, MatchesFormula) { CheckSoftmax(&Q8SoftmaxRows); }
TEST_P(Q8SoftmaxVariant, ZeroSumWritesNothing) { CheckZeroSumWritesNothing(&Q8SoftmaxRows); }

INSTANTIATE_TEST_SUITE_P(AllIsas, Q8SoftmaxVariant, ::testing::Values("avx512", "avx2", "scalar"),
                         [](const auto& info) { return info.param; });

TEST(Q8Softmax, ScalarMatchesFormula) { CheckSoftmax(&Q8SoftmaxRowsScalar); }

#if defined(__x86_64__)
TEST(Q8Softmax, EachX86VariantMatchesFormula) {
  const auto isas = SupportedSgemmIsas();
  auto has = [&](const char* isa) { return std::find(isas.begin(), isas.end(), isa) != isas.end(); };
  if (has("avx2")) {
    CheckSoftmax(&Q8SoftmaxRowsAvx2);
    CheckZeroSumWritesNothing(&Q8SoftmaxRowsAvx2);
  }
  if (has("avx512")) {
    CheckSoftmax(&Q8SoftmaxRowsAvx512);
    CheckZeroSumWritesNothing(&Q8SoftmaxRowsAvx512);
  }
}
#endif

}  // namespace
}  // namespace onyx::linalg
