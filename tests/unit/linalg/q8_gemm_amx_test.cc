// The AMX int8 GEMM kernel (32 x 32 tiles, K in steps of 64) against Q8GemmReference, exactly, on
// shapes around its tile edges: M and N tails past 32, K not a multiple of 64 (padded in both
// packs), A read in place (uint8, K a multiple of 64) and packed, all four signedness pairs, zero
// points per tensor / row / column, threads; its float and requantized outputs equal the AVX-512
// VNNI kernel's bit for bit; the companion vector kernels stay AVX-512 VNNI; ONYX_Q8_ISA picks a
// kernel for a process; a process whose signal stack is too small for AMX's frames is refused the
// tiles and runs VNNI. Skipped where the CPU lacks AMX-INT8 or Linux refuses the tile state.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "linalg/q8_gemm.h"
#include "linalg/q8_gemv.h"
#include "platform/cpu_features.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {
namespace {

// The CPU and the OS allow AMX; the chain must then offer it (checked, not assumed, below).
bool AmxSupported() { return GetCpuFeatures().amx_int8 && GetCpuFeatures().avx512vnni && RequestAmxPermission(); }

class Q8GemmAmx : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!AmxSupported())
      GTEST_SKIP() << "no AMX int8 GEMM here (CPU amx_int8=" << GetCpuFeatures().amx_int8
                   << ", tile permission=" << RequestAmxPermission() << ")";
    const auto isas = SupportedQ8Isas();
    ASSERT_NE(std::find(isas.begin(), isas.end(), "amx"), isas.end()) << "AMX allowed but not in the chain";
  }
  void TearDown() override { ForceQ8Isa("auto"); }

  struct Case {
    int64_t m, n, k;
    bool a_signed, b_signed, trans_b, a_zp_per_row, b_zp_per_col;
    int64_t lda_pad = 0;
  };

  // Random codes with extremes (-128 / 255) every few places; lda = k + lda_pad.
  void Fill(const Case& p, std::vector<uint8_t>& a, std::vector<uint8_t>& b, std::vector<int32_t>& a_zp,
            std::vector<int32_t>& b_zp, int64_t& lda, int64_t& ldb) {
    std::uniform_int_distribution<int> byte(0, 255);
    lda = p.k + p.lda_pad;
    ldb = p.trans_b ? p.k + 3 : p.n + 1;
    a.assign(static_cast<size_t>(std::max<int64_t>(1, p.m * lda)), 0);
    b.assign(static_cast<size_t>(std::max<int64_t>(1, (p.trans_b ? p.n : p.k) * ldb)), 0);
    for (auto& v : a) v = static_cast<uint8_t>(byte(rng_));
    for (auto& v : b) v = static_cast<uint8_t>(byte(rng_));
    for (size_t i = 0; i < a.size(); i += 7) a[i] = p.a_signed ? 0x80 : 0xff;
    for (size_t i = 0; i < b.size(); i += 5) b[i] = p.b_signed ? 0x80 : 0xff;
    auto zp = [&](bool is_signed) { return is_signed ? byte(rng_) - 128 : byte(rng_); };
    a_zp.clear(), b_zp.clear();
    for (int64_t i = 0; i < (p.a_zp_per_row ? p.m : 1); ++i) a_zp.push_back(zp(p.a_signed));
    for (int64_t j = 0; j < (p.b_zp_per_col ? p.n : 1); ++j) b_zp.push_back(zp(p.b_signed));
  }

  void Check(const Case& p, ThreadPool* pool = nullptr) {
    std::vector<uint8_t> a, b;
    std::vector<int32_t> a_zp, b_zp;
    int64_t lda, ldb;
    Fill(p, a, b, a_zp, b_zp, lda, ldb);
    std::vector<int32_t> ref(static_cast<size_t>(p.m * p.n));
    Q8GemmReference(p.m, p.n, p.k, a.data(), p.a_signed, lda, a_zp.data(), p.a_zp_per_row, p.trans_b, b.data(),
                    p.b_signed, ldb, b_zp.data(), p.b_zp_per_col, ref.data(), p.n);
    ASSERT_TRUE(ForceQ8Isa("amx"));
    const PackedQ8B packed(p.trans_b, p.k, p.n, b.data(), p.b_signed, ldb, b_zp.data(), p.b_zp_per_col, pool);
    ASSERT_STREQ(packed.kernel_name(), "q8_gemm_amx_32x32");
    const int64_t ldc = p.n + 3;
    std::vector<int32_t> c(static_cast<size_t>(p.m * ldc), 12345);
    Q8Output out;
    out.c = c.data();
    out.ldc = ldc;
    Q8Gemm(p.m, a.data(), p.a_signed, lda, a_zp.data(), p.a_zp_per_row, packed, out, pool);
    for (int64_t i = 0; i < p.m; ++i) {
      for (int64_t j = 0; j < p.n; ++j)
        ASSERT_EQ(c[static_cast<size_t>(i * ldc + j)], ref[static_cast<size_t>(i * p.n + j)])
            << "at (" << i << ", " << j << ") of " << p.m << "x" << p.n << "x" << p.k << " a_signed " << p.a_signed
            << " b_signed " << p.b_signed << " trans_b " << p.trans_b << " lda " << lda;
      for (int64_t j = p.n; j < ldc; ++j) ASSERT_EQ(c[static_cast<size_t>(i * ldc + j)], 12345) << "wrote past N";
    }
  }

  std::mt19937 rng_{64};
};

TEST_F(Q8GemmAmx, KNotAMultipleOf64AllSignednessPairs) {
  for (bool as : {false, true})
    for (bool bs : {false, true})
      for (int64_t k : {1, 3, 63, 64, 65, 130, 192})
        for (const auto& [m, n] : std::vector<std::array<int64_t, 2>>{{32, 32}, {33, 47}, {5, 64}, {70, 9}})
          Check({m, n, k, as, bs, false, false, false});
}

TEST_F(Q8GemmAmx, ZeroPointsPerRowAndColumnAndTransposedB) {
  for (bool trans : {false, true})
    for (bool per_row : {false, true})
      for (bool per_col : {false, true}) {
        Check({45, 37, 128, false, true, trans, per_row, per_col});  // uint8 A in place, a tail panel packed
        Check({33, 65, 77, true, false, trans, per_row, per_col});
        Check({64, 33, 64, false, false, trans, per_row, per_col});
      }
}

TEST_F(Q8GemmAmx, DirectAWithStridedRowsAndThreads) {
  ThreadPool pool(2);
  for (int64_t pad : {0, 5, 64}) {
    Check({128, 96, 768, false, true, false, false, false, pad}, &pool);  // BERT projection slice
    Check({96, 128, 64, false, false, false, false, true, pad}, &pool);   // one head's Q x K^T, uint8 B
    Check({64, 64, 128, false, false, true, true, false, pad}, &pool);
  }
  Check({37, 300, 1031, true, true, false, true, true}, &pool);  // long odd K, columns split
  Check({200, 70, 320, false, true, false, false, true}, nullptr);
}

// Wide products (BERT's shapes, many column panels over the same rows) with row and column
// tails and threads splitting N.
TEST_F(Q8GemmAmx, WideProductsWithTailsAndThreads) {
  ThreadPool pool(2);
  Check({128, 200, 768, false, true, false, false, false, 5}, &pool);
  Check({50, 161, 192, false, false, true, true, true}, &pool);
  Check({16, 300, 128, false, true, false, false, true}, nullptr);
}

TEST_F(Q8GemmAmx, EmptyKAndOneRow) {
  Check({40, 9, 0, false, true, false, true, true});
  Check({1, 50, 192, false, true, false, false, false});
}

// Float and requantized outputs (plain and transposed C) equal the AVX-512 VNNI kernel's exactly:
// the int32 sums are equal, and AMX's in-register output stage (full untransposed tiles) does the
// generic stage's operations in the same order.
TEST_F(Q8GemmAmx, OutputStagesEqualVnniBitForBit) {
  const auto isas = SupportedQ8Isas();
  ASSERT_NE(std::find(isas.begin(), isas.end(), "avx512vnni"), isas.end());
  // The second case: one scale for all columns and no bias.
  for (const Case& p : {Case{77, 70, 192, false, true, false, false, true}, Case{40, 65, 100, true, false, false, true, false}}) {
    const bool first = p.m == 77;
    std::vector<uint8_t> a, b;
    std::vector<int32_t> a_zp, b_zp;
    int64_t lda, ldb;
    Fill(p, a, b, a_zp, b_zp, lda, ldb);
    std::uniform_real_distribution<float> s(2e-4f, 3e-3f), bf(-2.0f, 2.0f);
    std::uniform_int_distribution<int32_t> bi(-30000, 30000);
    std::vector<float> scale(static_cast<size_t>(p.n)), bias(static_cast<size_t>(p.n));
    std::vector<int32_t> bias_int(static_cast<size_t>(p.n));
    for (int64_t j = 0; j < p.n; ++j) scale[j] = s(rng_), bias[j] = bf(rng_), bias_int[j] = bi(rng_);
    ThreadPool pool(2);
    for (int kind = 0; kind < 4; ++kind)
      for (bool transposed : {false, true}) {
        std::vector<std::vector<uint8_t>> results;
        for (const char* isa : {"avx512vnni", "amx"}) {
          ASSERT_TRUE(ForceQ8Isa(isa));
          const PackedQ8B packed(p.trans_b, p.k, p.n, b.data(), p.b_signed, ldb, b_zp.data(), p.b_zp_per_col);
          std::vector<uint8_t> y(static_cast<size_t>(p.m * p.n * 4), 0);
          Q8Output out;
          out.c = y.data();
          out.ldc = transposed ? p.m : p.n;
          out.transposed = transposed;
          out.scale = scale.data();
          out.scale_per_column = first;
          if (kind == 1) out.kind = Q8Output::kFloat, out.bias = first ? bias.data() : nullptr;
          if (kind >= 2)
            out.kind = Q8Output::kQuantized, out.bias_int = first ? bias_int.data() : nullptr, out.out_signed = kind == 3;
          out.zero_point = kind == 3 ? -3 : 130;
          Q8Gemm(p.m, a.data(), p.a_signed, lda, a_zp.data(), p.a_zp_per_row, packed, out, &pool);
          results.push_back(std::move(y));
        }
        EXPECT_EQ(results[0], results[1]) << "output kind " << kind << " transposed " << transposed;
      }
  }
}

// Q8GemmW and Q8Gemv have no AMX form: under AMX they stay on AVX-512 VNNI, not the scalar loop.
TEST_F(Q8GemmAmx, CompanionVectorKernelsStayVnni) {
  ASSERT_TRUE(ForceQ8Isa("amx"));
  EXPECT_STREQ(Q8GemvIsa(), "avx512vnni");
  EXPECT_TRUE(Q8GemmWAvailable());
  EXPECT_EQ(Q8GemmKernelName(), "q8_gemm_amx_32x32");
  ASSERT_TRUE(ForceQ8Isa("avx512vnni"));
  EXPECT_EQ(Q8GemmKernelName(), "q8_gemm_avx512vnni_8x32");
}

// AMX is first in the default chain (the SGEMM on AVX-512): a fresh process picks it, and
// ONYX_Q8_ISA=avx512vnni keeps a process on VNNI (how whole models are compared).
TEST_F(Q8GemmAmx, DefaultAndEnvironmentChoice) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // a re-executed child: it reads the variable anew
  EXPECT_EXIT(
      {
        unsetenv("ONYX_Q8_ISA");
        unsetenv("ONYX_LINALG_ISA");
        std::exit(Q8GemmKernelName() == "q8_gemm_amx_32x32" ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT(
      {
        setenv("ONYX_Q8_ISA", "avx512vnni", 1);
        std::exit(Q8GemmKernelName() == "q8_gemm_avx512vnni_8x32" ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

// Linux refuses the tile state to a process with an alternate signal stack too small for AMX's
// signal frame (a library that installed one, say): then the chain runs AVX-512 VNNI, correctly.
// Run in a fresh child process (it must not have asked yet); exits 0 when all holds.
[[noreturn]] void SmallSignalStackChild() {
  unsetenv("ONYX_Q8_ISA");
  unsetenv("ONYX_LINALG_ISA");
  // 8 KiB: enough for an AVX-512 frame, not for one with 8 KiB of tile data besides.
  static char stack[8192];
  stack_t ss{};
  ss.ss_sp = stack;
  ss.ss_size = sizeof(stack);
  if (sigaltstack(&ss, nullptr) != 0) std::exit(2);
  if (RequestAmxPermission()) std::exit(3);
  if (Q8GemmKernelName() != "q8_gemm_avx512vnni_8x32") std::exit(4);
  const int64_t m = 40, n = 33, k = 128;
  std::vector<uint8_t> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n));
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint8_t>(i * 37 + 11);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint8_t>(i * 53 + 5);
  const int32_t a_zero = 3, b_zero = -2;
  std::vector<int32_t> ref(static_cast<size_t>(m * n)), c(ref.size());
  Q8GemmReference(m, n, k, a.data(), false, k, &a_zero, false, false, b.data(), true, n, &b_zero, false, ref.data(),
                  n);
  const PackedQ8B packed(false, k, n, b.data(), true, n, &b_zero, false);
  Q8Output out;
  out.c = c.data();
  out.ldc = n;
  Q8Gemm(m, a.data(), false, k, &a_zero, false, packed, out, nullptr);
  std::exit(c == ref ? 0 : 5);
}

TEST(Q8GemmAmxPermission, RefusedWithASmallSignalStackFallsBackToVnni) {
  const CpuFeatures& f = GetCpuFeatures();
  if (!f.amx_int8 || !f.avx512vnni) GTEST_SKIP() << "no AMX-INT8 here";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(SmallSignalStackChild(), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace onyx::linalg
