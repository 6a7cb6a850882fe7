// Every bf16 GEMM variant against the scalar Bf16GemmReference. Both round A to bfloat16 the
// same way and form each product exactly (bf16 x bf16 fits in float32), so they differ only in
// how the float32 sums round (vdpbf16ps adds each pair's odd product before its even one,
// TDPBF16PS sums each 16-pair step in its own tree-like order): the tolerance is that of a
// K-term float32 sum, (K + 2) * 2^-23 * sum |a b|, about 100 times below what rounding A or B
// differently to bfloat16 (2^-8 relative) would cost.
#include "linalg/bf16_gemm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "linalg/bf16_gemm_kernel.h"
#include "linalg/bf16_test_values.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {
namespace {

class Bf16GemmVariant : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const auto isas = SupportedBf16Isas();
    if (std::find(isas.begin(), isas.end(), GetParam()) == isas.end())
      GTEST_SKIP() << GetParam() << " is not supported by this CPU";
    ASSERT_TRUE(ForceBf16Isa(GetParam()));
  }
  void TearDown() override { ForceBf16Isa("auto"); }
};

using bf16_test::Bf16Value;
using bf16_test::Random;

struct Case {
  int64_t m, n, k;
  bool trans_a = false, trans_b = false;
  float alpha = 1.0f, beta = 0.0f;
  bool bias_col = false, bias_row = false, residual = false;
  GemmEpilogue::Activation act = GemmEpilogue::kNone;
  int threads = 1;
};

void Check(const Case& cs) {
  SCOPED_TRACE(::testing::Message() << "m=" << cs.m << " n=" << cs.n << " k=" << cs.k << " ta=" << cs.trans_a
                                    << " tb=" << cs.trans_b << " act=" << cs.act << " threads=" << cs.threads);
  const int64_t m = cs.m, n = cs.n, k = cs.k;
  const int64_t lda = (cs.trans_a ? m : k) + 3, ldb = (cs.trans_b ? k : n) + 1, ldc = n + 2;
  const auto a = Random(static_cast<size_t>((cs.trans_a ? k : m) * lda), 1);
  const auto bf = Random(static_cast<size_t>((cs.trans_b ? n : k) * ldb), 2);
  // B as bfloat16 bits [K, N] for the reference.
  std::vector<uint16_t> b16(static_cast<size_t>(k * n));
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = 0; j < n; ++j) b16[p * n + j] = RoundToBf16Bits(cs.trans_b ? bf[j * ldb + p] : bf[p * ldb + j]);
  const auto bias_col = Random(static_cast<size_t>(n), 3), bias_row = Random(static_cast<size_t>(m), 4);
  const auto residual = Random(static_cast<size_t>(m * n), 5);
  GemmEpilogue ep;
  ep.bias_per_col = cs.bias_col ? bias_col.data() : nullptr;
  ep.bias_per_row = cs.bias_row ? bias_row.data() : nullptr;
  ep.residual = cs.residual ? residual.data() : nullptr;
  ep.ldr = n;
  ep.activation = cs.act;
  ep.alpha = cs.act == GemmEpilogue::kClip ? -0.3f : 0.1f;
  ep.beta = cs.act == GemmEpilogue::kClip ? 0.4f : 0.5f;
  const auto c0 = Random(static_cast<size_t>(m * ldc), 6);
  std::vector<float> ref = c0, got = c0;
  Bf16GemmReference(cs.trans_a, m, n, k, cs.alpha, a.data(), lda, b16.data(), n, cs.beta, ref.data(), ldc, &ep);
  const PackedBf16B packed(cs.trans_b, k, n, bf.data(), ldb);
  ThreadPool pool(cs.threads);
  Bf16GemmPackedB(cs.trans_a, m, n, k, cs.alpha, a.data(), lda, packed, cs.beta, got.data(), ldc,
                  cs.threads > 1 ? &pool : nullptr, &ep);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < ldc; ++j) {
      if (j >= n) {  // padding between rows is untouched
        ASSERT_EQ(got[i * ldc + j], c0[i * ldc + j]) << i << "," << j;
        continue;
      }
      double mag = 0.0;
      for (int64_t p = 0; p < k; ++p)
        mag += std::fabs(Bf16Value(cs.trans_a ? a[p * lda + i] : a[i * lda + p])) *
               std::fabs(static_cast<double>(Bf16Value(cs.trans_b ? bf[j * ldb + p] : bf[p * ldb + j])));
      const double tol = (k + 2) * std::ldexp(1.0, -23) * mag * std::fabs(cs.alpha) * 1.5 + 1e-7;
      ASSERT_NEAR(got[i * ldc + j], ref[i * ldc + j], tol) << i << "," << j;
    }
}

TEST_P(Bf16GemmVariant, Shapes) {
  for (int64_t m : {1, 3, 13, 14, 15, 29, 60})
    for (int64_t n : {1, 17, 32, 33, 70})
      for (int64_t k : {1, 2, 7, 33, 130}) Check({m, n, k});
}

// Tails of every tile shape (AVX-512 14 rows, AMX 32 rows and 16-pair K steps, 32-column panels),
// odd K, over one and two threads.
TEST_P(Bf16GemmVariant, Tails) {
  const int64_t sizes[] = {1, 15, 16, 17, 31, 33, 100};
  int turn = 0;
  for (int64_t m : sizes)
    for (int64_t n : sizes)
      for (int64_t k : sizes) {
        Case cs{m, n, k};
        cs.threads = 1 + (turn++ % 2);
        Check(cs);
      }
}

TEST_P(Bf16GemmVariant, TransposesAlphaBeta) {
  Check({17, 45, 31, true, false});
  Check({17, 45, 31, false, true});
  Check({17, 45, 31, true, true, 0.5f, 0.75f});
  Check({30, 64, 64, false, false, -2.0f, 1.0f});
  Check({33, 31, 33, true, false, 1.0f, 0.5f});   // AMX: rows 16-31 of a second tile, K past one step
  Check({100, 17, 65, true, true, 0.25f, -1.0f, false, false, false, GemmEpilogue::kNone, 2});
}

TEST_P(Bf16GemmVariant, Epilogues) {
  for (auto act : {GemmEpilogue::kNone, GemmEpilogue::kRelu, GemmEpilogue::kClip, GemmEpilogue::kLeakyRelu,
                   GemmEpilogue::kHardSigmoid, GemmEpilogue::kSigmoid, GemmEpilogue::kTanh, GemmEpilogue::kSilu,
                   GemmEpilogue::kGeluErf, GemmEpilogue::kGeluTanh}) {
    Case cs{19, 40, 21};
    cs.bias_col = cs.bias_row = cs.residual = true;
    cs.beta = 0.5f;
    cs.act = act;
    Check(cs);
  }
}

TEST_P(Bf16GemmVariant, ThreadsAndBlocks) {
  // Several M blocks (8 tiles) and panel groups (4 panels), split over threads.
  Check({250, 300, 97, false, false, 1.0f, 0.0f, true, false, false, GemmEpilogue::kNone, 2});
  Check({113, 129, 768, false, false, 1.0f, 0.0f, false, false, false, GemmEpilogue::kNone, 2});
}

// Activations are rounded to bfloat16, to nearest even, before the multiply.
TEST_P(Bf16GemmVariant, RoundsActivationsToNearestEven) {
  const float a[4] = {1.0f + std::ldexp(1.0f, -8),        // a tie: rounds to even 1.0
                      1.0f + 3.0f * std::ldexp(1.0f, -9),  // above the tie: 1 + 2^-7
                      1.0f + std::ldexp(1.0f, -7),         // exact
                      -3.0f};
  const float b[4] = {1.0f, 1.0f, 1.0f, 0.0f};  // [K=4, N=1]
  const PackedBf16B packed(false, 4, 1, b, 1);
  for (int i = 0; i < 3; ++i) {
    float c = 0.0f;
    Bf16GemmPackedB(false, 1, 1, 1, 1.0f, a + i, 1, PackedBf16B(false, 1, 1, b, 1), 0.0f, &c, 1, nullptr);
    const float want[3] = {1.0f, 1.0f + std::ldexp(1.0f, -7), 1.0f + std::ldexp(1.0f, -7)};
    EXPECT_EQ(c, want[i]) << i;
  }
  float c = 0.0f;
  Bf16GemmPackedB(false, 1, 1, 4, 1.0f, a, 4, packed, 0.0f, &c, 1, nullptr);
  EXPECT_EQ(c, 1.0f + 2.0f * (1.0f + std::ldexp(1.0f, -7)));
}

TEST_P(Bf16GemmVariant, PackFromBitsEqualsPackFromFloats) {
  const auto bf = Random(37 * 21, 9);
  std::vector<uint16_t> bits(bf.size());
  for (size_t i = 0; i < bf.size(); ++i) bits[i] = RoundToBf16Bits(bf[i]);
  const PackedBf16B from_floats(true, 37, 21, bf.data(), 37), from_bits(true, 37, 21, bits.data(), 37);
  const auto a = Random(5 * 37, 10);
  std::vector<float> c1(5 * 21), c2(5 * 21);
  Bf16GemmPackedB(false, 5, 21, 37, 1.0f, a.data(), 37, from_floats, 0.0f, c1.data(), 21, nullptr);
  Bf16GemmPackedB(false, 5, 21, 37, 1.0f, a.data(), 37, from_bits, 0.0f, c2.data(), 21, nullptr);
  EXPECT_EQ(c1, c2);
}

TEST_P(Bf16GemmVariant, WrongPackedShapeThrows) {
  const std::vector<float> b(6, 1.0f), a(6, 1.0f);
  std::vector<float> c(9);
  const PackedBf16B packed(false, 2, 3, b.data(), 3);
  EXPECT_THROW(Bf16GemmPackedB(false, 3, 3, 3, 1.0f, a.data(), 3, packed, 0.0f, c.data(), 3, nullptr),
               std::invalid_argument);
}

// Channel-blocked operands (a pointwise NCHWc convolution): A [K/16][M][16], C and the residual
// [N/16][M][16], against the reference on the same values row-major. The costly activations run
// over each task's finished block of C (M past one task of 8 tiles).
TEST_P(Bf16GemmVariant, BlockedOperands) {
  for (auto act : {GemmEpilogue::kRelu, GemmEpilogue::kHardSigmoid, GemmEpilogue::kSilu, GemmEpilogue::kSigmoid})
  for (int64_t m : {1, 15, 49, 250}) {
    const int64_t k = 48, n = 80;
    const auto a = Random(static_cast<size_t>(m * k), 11), bf = Random(static_cast<size_t>(k * n), 12);
    const auto bias = Random(static_cast<size_t>(n), 13), res = Random(static_cast<size_t>(m * n), 14);
    std::vector<float> a_blocked(a.size()), res_blocked(res.size());
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t p = 0; p < k; ++p) a_blocked[(p / 16) * m * 16 + r * 16 + p % 16] = a[r * k + p];
      for (int64_t j = 0; j < n; ++j) res_blocked[(j / 16) * m * 16 + r * 16 + j % 16] = res[r * n + j];
    }
    std::vector<uint16_t> b16(bf.size());
    for (size_t i = 0; i < bf.size(); ++i) b16[i] = RoundToBf16Bits(bf[i]);
    GemmEpilogue ep;
    ep.bias_per_col = bias.data();
    ep.residual = res.data();
    ep.ldr = n;
    ep.activation = act;
    ep.alpha = 0.2f;  // HardSigmoid's
    ep.beta = 0.5f;
    std::vector<float> ref(static_cast<size_t>(m * n));
    Bf16GemmReference(false, m, n, k, 1.0f, a.data(), k, b16.data(), n, 0.0f, ref.data(), n, &ep);
    ep.residual = res_blocked.data();
    ep.ldr = 16;
    std::vector<float> got(static_cast<size_t>(m * n), -7.0f);
    Bf16GemmPackedBBlocked(m, n, k, 1.0f, a_blocked.data(), 16, m * 16, PackedBf16B(false, k, n, bf.data(), n), 0.0f,
                           got.data(), 16, m * 16, nullptr, &ep);
    for (int64_t r = 0; r < m; ++r)
      for (int64_t j = 0; j < n; ++j) {
        double mag = 0.0;
        for (int64_t p = 0; p < k; ++p) mag += std::fabs(Bf16Value(a[r * k + p]) * Bf16Value(bf[p * n + j]));
        ASSERT_NEAR(got[(j / 16) * m * 16 + r * 16 + j % 16], ref[r * n + j], (k + 2) * std::ldexp(1.0, -23) * mag * 1.5 + 1e-6)
            << "act=" << act << " m=" << m << " " << r << "," << j;
      }
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, Bf16GemmVariant, ::testing::Values("amx", "avx512bf16", "scalar"),
                         [](const auto& info) { return info.param; });

TEST(Bf16GemmConfig, UnknownIsaRefused) {
  EXPECT_FALSE(ForceBf16Isa("avx2"));
  EXPECT_FALSE(ForceBf16Isa("nonsense"));
  EXPECT_TRUE(ForceBf16Isa("scalar"));
  EXPECT_TRUE(Bf16GemmAvailable());
  EXPECT_STREQ(Bf16GemmKernelName(), "bf16_gemm_scalar_4x32");
  EXPECT_TRUE(ForceBf16Isa("auto"));
}

// The AVX-512 variant runs by default only where its instruction outruns FMA (ONYX_BF16_GEMM
// decides when set): on the Xeon we measured, bfloat16 models ran at half their float32 twins'
// speed on it. AMX runs by default; "off" still turns it off.
TEST(Bf16GemmConfig, RunsByDefaultOnlyWhereVdpbf16psOutrunsFmaOrOnAmx) {
  EXPECT_TRUE(Bf16GemmWorthIt(nullptr, "avx512bf16", 1.95));  // AMD Zen 4
  EXPECT_FALSE(Bf16GemmWorthIt(nullptr, "avx512bf16", 0.5));  // the Xeon
  EXPECT_FALSE(Bf16GemmWorthIt("", "avx512bf16", 1.0));
  EXPECT_TRUE(Bf16GemmWorthIt("auto", "avx512bf16", kBf16MinDotOverFmaRate));
  EXPECT_TRUE(Bf16GemmWorthIt("on", "avx512bf16", 0.4));
  EXPECT_FALSE(Bf16GemmWorthIt("off", "avx512bf16", 1.95));
  EXPECT_THROW(Bf16GemmWorthIt("yes", "avx512bf16", 1.95), std::invalid_argument);
  EXPECT_TRUE(Bf16GemmWorthIt(nullptr, "amx", 0.0));
  EXPECT_TRUE(Bf16GemmWorthIt("auto", "amx", 0.0));
  EXPECT_FALSE(Bf16GemmWorthIt("off", "amx", 0.0));
  EXPECT_THROW(Bf16GemmWorthIt("yes", "amx", 0.0), std::invalid_argument);
}

#if defined(__x86_64__)
TEST(Bf16GemmConfig, MeasuresVdpbf16psAgainstFma) {
  const auto isas = SupportedBf16Isas();
  if (std::find(isas.begin(), isas.end(), "avx512bf16") == isas.end()) GTEST_SKIP() << "no AVX-512 BF16 on this CPU";
  const double rate = MeasureBf16DotOverFmaRate();
  // Far from both ends on every CPU we know (0.4 to 2): a broken loop gives 0, or the compiler
  // having folded one of them away, a huge or tiny ratio.
  EXPECT_GT(rate, 0.1);
  EXPECT_LT(rate, 10.0);
  std::printf("vdpbf16ps / FMA multiply-adds per second on this core: %.2f\n", rate);
}
#endif

TEST(Bf16GemmConfig, RoundToBf16Bits) {
  EXPECT_EQ(RoundToBf16Bits(1.0f), 0x3F80);
  EXPECT_EQ(RoundToBf16Bits(-2.0f), 0xC000);
  EXPECT_EQ(RoundToBf16Bits(1.0f + std::ldexp(1.0f, -8)), 0x3F80);              // tie to even
  EXPECT_EQ(RoundToBf16Bits(1.0f + 3.0f * std::ldexp(1.0f, -8)), 0x3F82);       // tie to even (up)
  EXPECT_EQ(RoundToBf16Bits(std::numeric_limits<float>::infinity()), 0x7F80);
  EXPECT_TRUE((RoundToBf16Bits(std::nanf("")) & 0x7F80) == 0x7F80 && (RoundToBf16Bits(std::nanf("")) & 0x7F));
}

}  // namespace
}  // namespace onyx::linalg
