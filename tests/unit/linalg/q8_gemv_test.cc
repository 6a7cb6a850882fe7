// Q8Gemv (one row of A against a packed constant B) for every int8 ISA variant against the
// int8 GEMM's plain reference: all four signedness pairs, zero points per tensor and per
// column (extreme codes included), K not a multiple of 4, N not a multiple of the panel width,
// B plain and transposed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "linalg/gemm.h"
#include "linalg/q8_gemm.h"
#include "linalg/q8_gemv.h"
#include "linalg/q8_isa_test.h"

namespace onyx::linalg {
namespace {

class Q8GemvVariant : public ForcedQ8IsaTest {
 protected:
  void SetUp() override {
    ForcedQ8IsaTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_EQ(std::string(Q8GemvIsa()), GetParam());
  }
};

TEST_P(Q8GemvVariant, MatchesReference) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> byte(0, 255);
  const int64_t shapes[][2] = {{1, 1}, {3, 5}, {4, 16}, {37, 70}, {2048, 100}, {129, 17}};
  for (const auto& shape : shapes)
    for (int a_signed = 0; a_signed < 2; ++a_signed)
      for (int b_signed = 0; b_signed < 2; ++b_signed)
        for (int trans_b = 0; trans_b < 2; ++trans_b)
          for (int per_column = 0; per_column < 2; ++per_column) {
            const int64_t k = shape[0], n = shape[1];
            std::vector<uint8_t> a(static_cast<size_t>(k)), b(static_cast<size_t>(k * n));
            for (auto& v : a) v = static_cast<uint8_t>(byte(rng));
            for (auto& v : b) v = static_cast<uint8_t>(byte(rng));
            a[0] = a_signed ? 0x80 : 255;  // extreme codes
            b[0] = b_signed ? 0x80 : 255;
            std::vector<int32_t> zb(static_cast<size_t>(per_column ? n : 1));
            for (auto& z : zb) z = b_signed ? static_cast<int8_t>(byte(rng)) : byte(rng);
            zb[0] = b_signed ? -128 : 255;
            const int32_t za = a_signed ? 127 : 3;
            const int64_t ldb = trans_b ? k : n;
            std::vector<int32_t> want(static_cast<size_t>(n)), got(static_cast<size_t>(n), -7);
            Q8GemmReference(1, n, k, a.data(), a_signed, k, &za, false, trans_b, b.data(), b_signed, ldb, zb.data(),
                            per_column, want.data(), n);
            const PackedQ8Gemv packed(trans_b, k, n, b.data(), b_signed, ldb, zb.data(), per_column);
            Q8Gemv(a.data(), a_signed, za, packed, got.data());
            ASSERT_EQ(got, want) << "k " << k << " n " << n << " a_signed " << a_signed << " b_signed " << b_signed
                                 << " trans_b " << trans_b << " per_column " << per_column;
          }
}

INSTANTIATE_TEST_SUITE_P(AllIsas, Q8GemvVariant, ::testing::Values("avx512vnni", "avx2", "scalar"),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace onyx::linalg
