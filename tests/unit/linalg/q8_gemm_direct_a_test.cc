// Q8Gemm's unpacked-A path (uint8 A in whole 4-code groups: full MR-row panels read in place by
// the kernel's direct tile, a partial last panel packed) for every ISA against Q8GemmReference:
// BERT-like shapes, strided A rows, B zero points that need A's row sums and ones that do not,
// threads splitting N; and the float output stage's bias, added after the rounded product.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "linalg/q8_gemm.h"
#include "linalg/q8_isa_test.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {
namespace {

class Q8GemmDirectA : public ForcedQ8IsaTest {
 protected:
  // uint8 A [m, k] with row stride lda; B [k, n] int8 (b_signed) or uint8 with zero point b_zero.
  void Check(int64_t m, int64_t n, int64_t k, int64_t lda, bool b_signed, int32_t b_zero, ThreadPool* pool) {
    std::uniform_int_distribution<int> byte(0, 255);
    std::vector<uint8_t> a(static_cast<size_t>(m * lda)), b(static_cast<size_t>(k * n));
    for (auto& v : a) v = static_cast<uint8_t>(byte(rng_));
    for (auto& v : b) v = static_cast<uint8_t>(byte(rng_));
    for (size_t i = 0; i < a.size(); i += 5) a[i] = 0xff;
    for (size_t i = 0; i < b.size(); i += 3) b[i] = b_signed ? 0x80 : 0xff;
    const int32_t a_zero = 131;
    std::vector<int32_t> ref(static_cast<size_t>(m * n));
    Q8GemmReference(m, n, k, a.data(), false, lda, &a_zero, false, false, b.data(), b_signed, n, &b_zero, false,
                    ref.data(), n);
    const PackedQ8B packed(false, k, n, b.data(), b_signed, n, &b_zero, false, pool);
    std::vector<int32_t> c(static_cast<size_t>(m * n), 12345);
    Q8Output out;
    out.c = c.data();
    out.ldc = n;
    Q8Gemm(m, a.data(), false, lda, &a_zero, false, packed, out, pool);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        ASSERT_EQ(c[static_cast<size_t>(i * n + j)], ref[static_cast<size_t>(i * n + j)])
            << "at (" << i << ", " << j << ") of " << m << "x" << n << "x" << k << " lda " << lda << " b_zero "
            << b_zero << (b_signed ? " int8 B" : " uint8 B");
  }

  std::mt19937 rng_{7};
};

TEST_P(Q8GemmDirectA, WholePanelsInPlaceAndPartialPanelPacked) {
  // int8 B with zero point 0: no row sums needed; uint8 B (stored - 128) and a nonzero int8
  // zero point: the row sums count.
  for (const auto& [bs, bz] : std::vector<std::pair<bool, int32_t>>{{true, 0}, {false, 128}, {false, 97}, {true, -5}})
    for (const auto& [m, n, k] : std::vector<std::array<int64_t, 3>>{
             {8, 32, 4}, {16, 37, 64}, {21, 64, 128}, {40, 70, 100}, {3, 33, 68}, {12, 19, 30}})
      for (int64_t pad : {0, 9}) Check(m, n, k, k + pad, bs, bz, nullptr);
}

TEST_P(Q8GemmDirectA, BertShapesOnThreads) {
  ThreadPool pool(2);
  Check(128, 96, 768, 768, true, 0, &pool);    // a projection's slice: N split across threads
  Check(128, 128, 64, 64, false, 128, &pool);  // attention's Q x K^T of one head (uint8 K^T)
  Check(128, 64, 128, 192, false, 119, &pool); // softmax x V of one head, strided rows
}

TEST_P(Q8GemmDirectA, FloatBiasAddedAfterTheRoundedProduct) {
  const int64_t m = 24, n = 40, k = 36;
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<uint8_t> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n));
  for (auto& v : a) v = static_cast<uint8_t>(byte(rng_));
  for (auto& v : b) v = static_cast<uint8_t>(byte(rng_));
  const int32_t a_zero = 120, b_zero = 0;
  std::vector<int32_t> ref(static_cast<size_t>(m * n));
  Q8GemmReference(m, n, k, a.data(), false, k, &a_zero, false, false, b.data(), true, n, &b_zero, false, ref.data(),
                  n);
  std::vector<float> scale(static_cast<size_t>(n)), bias(static_cast<size_t>(n));
  std::uniform_real_distribution<float> s(1e-4f, 3e-3f), bf(-3.0f, 3.0f);
  for (int64_t j = 0; j < n; ++j) scale[j] = s(rng_), bias[j] = bf(rng_);
  const PackedQ8B packed(false, k, n, b.data(), true, n, &b_zero, false);
  std::vector<float> y(static_cast<size_t>(m * n));
  Q8Output out;
  out.kind = Q8Output::kFloat;
  out.c = y.data();
  out.ldc = n;
  out.scale = scale.data();
  out.scale_per_column = true;
  out.bias = bias.data();
  Q8Gemm(m, a.data(), false, k, &a_zero, false, packed, out, nullptr);
  int differs_from_fma = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      volatile float product = static_cast<float>(ref[i * n + j]) * scale[j];  // rounded here
      const float want = product + bias[j];
      ASSERT_EQ(y[i * n + j], want) << "at (" << i << ", " << j << ")";
      differs_from_fma += want != std::fma(static_cast<float>(ref[i * n + j]), scale[j], bias[j]);
    }
  EXPECT_GT(differs_from_fma, 0) << "the data should tell a fused multiply-add from two roundings";
}

INSTANTIATE_TEST_SUITE_P(AllIsas, Q8GemmDirectA, ::testing::Values("amx", "avx512vnni", "avx2", "scalar"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace onyx::linalg
