// The AMX-BF16 variant's own cases (bf16_gemm_test.cc runs every shared case on it too): it is the
// default where the CPU has it, its K steps of 16 pairs read only zeros past K (B panels padded at
// pack time), long K sums stay within a float32 sum's tolerance of Bf16GemmReference, and the
// tiles of a plain product go straight into C.
// Skipped, saying so, where the CPU lacks AMX-BF16 or Linux refuses the tile state.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "linalg/bf16_gemm.h"
#include "linalg/bf16_test_values.h"
#include "platform/cpu_features.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {
namespace {

// From the CPU's own report, not from the selection under test.
bool HasAmx() {
  const CpuFeatures& cpu = GetCpuFeatures();
  return cpu.amx_bf16 && cpu.avx512_bf16 && RequestAmxPermission();
}

class Bf16GemmAmx : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HasAmx()) GTEST_SKIP() << "no AMX-BF16 on this CPU, or Linux refused the AMX tile state";
    ASSERT_TRUE(ForceBf16Isa("amx"));
    EXPECT_STREQ(Bf16GemmKernelName(), "bf16_gemm_amx_32x32");
  }
  void TearDown() override { ForceBf16Isa("auto"); }
};

using bf16_test::Bf16Value;
using bf16_test::Random;

TEST(Bf16GemmAmxConfig, BestAndDefaultWhereTheCpuHasIt) {
  if (!HasAmx()) GTEST_SKIP() << "no AMX-BF16 on this CPU, or Linux refused the AMX tile state";
  ASSERT_EQ(SupportedBf16Isas().front(), "amx");
  const char* mode = std::getenv("ONYX_BF16_GEMM");
  const char* isa = std::getenv("ONYX_LINALG_ISA");
  if ((mode != nullptr && std::string_view(mode) == "off") ||
      (isa != nullptr && !std::string_view(isa).empty() && std::string_view(isa) != "auto" &&
       std::string_view(isa) != "avx512" && std::string_view(isa) != "avx512bf16"))
    GTEST_SKIP() << "ONYX_BF16_GEMM / ONYX_LINALG_ISA turn the family off in this process";
  ASSERT_TRUE(ForceBf16Isa("auto"));
  EXPECT_STREQ(Bf16GemmKernelName(), "bf16_gemm_amx_32x32");
}

// Panels keep 16-pair rows (K = 20: 10 pairs padded to 16) so that the last K step of panel 0
// reads zeros, not panel 1's infinities (0 x Inf = NaN).
TEST_F(Bf16GemmAmx, KStepPastKReadsZerosOfItsOwnPanel) {
  const int64_t m = 20, n = 64, k = 20;
  auto b = Random(static_cast<size_t>(k * n), 1);
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = 32; j < n; ++j) b[p * n + j] = std::numeric_limits<float>::infinity();
  const PackedBf16B packed(false, k, n, b.data(), n);
  EXPECT_EQ(packed.panel_pairs(), 16);
  EXPECT_EQ(packed.bytes(), 2u * 16 * 32 * sizeof(uint32_t));
  const auto a = Random(static_cast<size_t>(m * k), 2);
  std::vector<float> c(static_cast<size_t>(m * n));
  Bf16GemmPackedB(false, m, n, k, 1.0f, a.data(), k, packed, 0.0f, c.data(), n, nullptr);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < 32; ++j) {
      double want = 0.0;
      for (int64_t p = 0; p < k; ++p) want += static_cast<double>(Bf16Value(a[i * k + p])) * Bf16Value(b[p * n + j]);
      ASSERT_NEAR(c[i * n + j], want, 1e-4) << i << "," << j;
    }
}

// BERT's longest K (3072: 96 steps) against the reference, over two threads, and against the
// exact (double) sum: the float32 sums of TDPBF16PS are no further from it than the reference's.
TEST_F(Bf16GemmAmx, LongKWithinFloat32SumTolerance) {
  const int64_t m = 40, n = 48, k = 3072;
  const auto a = Random(static_cast<size_t>(m * k), 3), b = Random(static_cast<size_t>(k * n), 4);
  std::vector<uint16_t> b16(b.size());
  for (size_t i = 0; i < b.size(); ++i) b16[i] = RoundToBf16Bits(b[i]);
  std::vector<float> ref(static_cast<size_t>(m * n)), got(ref.size());
  Bf16GemmReference(false, m, n, k, 1.0f, a.data(), k, b16.data(), n, 0.0f, ref.data(), n);
  ThreadPool pool(2);
  Bf16GemmPackedB(false, m, n, k, 1.0f, a.data(), k, PackedBf16B(false, k, n, b.data(), n), 0.0f, got.data(), n,
                  &pool);
  double worst_got = 0.0, worst_ref = 0.0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double exact = 0.0, mag = 0.0;
      for (int64_t p = 0; p < k; ++p) {
        const double v = static_cast<double>(Bf16Value(a[i * k + p])) * Bf16Value(b[p * n + j]);
        exact += v;
        mag += std::fabs(v);
      }
      const double tol = (k + 2) * std::ldexp(1.0, -23) * mag * 1.5;
      ASSERT_NEAR(got[i * n + j], ref[i * n + j], tol) << i << "," << j;
      worst_got = std::max(worst_got, std::fabs(got[i * n + j] - exact) / mag);
      worst_ref = std::max(worst_ref, std::fabs(ref[i * n + j] - exact) / mag);
    }
  EXPECT_LE(worst_got, 2.0 * worst_ref + 1e-7) << "AMX " << worst_got << " reference " << worst_ref;
}

// Whole tiles of a plain product (no alpha, beta, bias or residual; a costly activation comes
// after) are stored straight into C: row-major and channel-blocked C, with tails that take the
// staged path beside them.
TEST_F(Bf16GemmAmx, PlainTilesStoreStraightIntoC) {
  for (auto act : {GemmEpilogue::kNone, GemmEpilogue::kSilu})
    for (int64_t m : {16, 64, 80})
      for (int64_t n : {64, 80}) {
        const int64_t k = 48;
        const auto a = Random(static_cast<size_t>(m * k), 5), b = Random(static_cast<size_t>(k * n), 6);
        std::vector<uint16_t> b16(b.size());
        for (size_t i = 0; i < b.size(); ++i) b16[i] = RoundToBf16Bits(b[i]);
        GemmEpilogue ep;
        ep.activation = act;
        std::vector<float> ref(static_cast<size_t>(m * n));
        Bf16GemmReference(false, m, n, k, 1.0f, a.data(), k, b16.data(), n, 0.0f, ref.data(), n, &ep);
        const PackedBf16B packed(false, k, n, b.data(), n);
        // Row-major C with padding between rows (untouched), then channel-blocked A and C.
        const int64_t ldc = n + 5;
        std::vector<float> got(static_cast<size_t>(m * ldc), -3.0f);
        Bf16GemmPackedB(false, m, n, k, 1.0f, a.data(), k, packed, 0.0f, got.data(), ldc, nullptr, &ep);
        std::vector<float> a_blocked(a.size()), got_blocked(static_cast<size_t>(m * n), -7.0f);
        for (int64_t r = 0; r < m; ++r)
          for (int64_t p = 0; p < k; ++p) a_blocked[(p / 16) * m * 16 + r * 16 + p % 16] = a[r * k + p];
        Bf16GemmPackedBBlocked(m, n, k, 1.0f, a_blocked.data(), 16, m * 16, packed, 0.0f, got_blocked.data(), 16,
                               m * 16, nullptr, &ep);
        for (int64_t r = 0; r < m; ++r) {
          for (int64_t j = 0; j < n; ++j) {
            double mag = 0.0;
            for (int64_t p = 0; p < k; ++p) mag += std::fabs(Bf16Value(a[r * k + p]) * Bf16Value(b[p * n + j]));
            const double tol = (k + 2) * std::ldexp(1.0, -23) * mag * 1.5 + 1e-6;
            ASSERT_NEAR(got[r * ldc + j], ref[r * n + j], tol) << "act=" << act << " m=" << m << " " << r << "," << j;
            ASSERT_NEAR(got_blocked[(j / 16) * m * 16 + r * 16 + j % 16], ref[r * n + j], tol)
                << "blocked act=" << act << " m=" << m << " " << r << "," << j;
          }
          for (int64_t j = n; j < ldc; ++j) ASSERT_EQ(got[r * ldc + j], -3.0f) << r << "," << j;
        }
      }
}

}  // namespace
}  // namespace onyx::linalg
