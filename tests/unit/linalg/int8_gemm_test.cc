// Q8Gemm (int8 GEMM, int32 accumulation) for every ISA variant against Q8GemmReference on odd
// sizes: all four signedness pairs, zero points per tensor / per row / per column, transposed B,
// strided A and C, threads; and the float and requantizing output stages against formulas
// applied here to the reference's int32 result.
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

struct Problem {
  int64_t m, n, k;
  bool a_signed, b_signed, trans_b, a_zp_per_row, b_zp_per_col;
};

class Int8GemmVariant : public ForcedQ8IsaTest {
 protected:
  struct Data {
    std::vector<uint8_t> a, b;  // raw bytes, read as int8 or uint8
    std::vector<int32_t> a_zp, b_zp, ref;
    int64_t lda, ldb;
  };

  Data Make(const Problem& p) {
    Data d;
    d.lda = p.k + 5;
    d.ldb = p.trans_b ? p.k + 3 : p.n + 3;
    std::uniform_int_distribution<int> byte(0, 255);
    d.a.resize(static_cast<size_t>(p.m * d.lda));
    d.b.resize(static_cast<size_t>((p.trans_b ? p.n : p.k) * d.ldb));
    for (auto& v : d.a) v = static_cast<uint8_t>(byte(rng_));
    for (auto& v : d.b) v = static_cast<uint8_t>(byte(rng_));
    // Extreme codes in places: -128 / 255 products stress any int16 step.
    for (size_t i = 0; i < d.a.size(); i += 7) d.a[i] = p.a_signed ? 0x80 : 0xff;
    for (size_t i = 0; i < d.b.size(); i += 5) d.b[i] = p.b_signed ? 0x80 : 0xff;
    auto zp = [&](bool is_signed) { return is_signed ? byte(rng_) - 128 : byte(rng_); };
    for (int64_t i = 0; i < (p.a_zp_per_row ? p.m : 1); ++i) d.a_zp.push_back(zp(p.a_signed));
    for (int64_t j = 0; j < (p.b_zp_per_col ? p.n : 1); ++j) d.b_zp.push_back(zp(p.b_signed));
    d.ref.resize(static_cast<size_t>(p.m * p.n));
    Q8GemmReference(p.m, p.n, p.k, d.a.data(), p.a_signed, d.lda, d.a_zp.data(), p.a_zp_per_row, p.trans_b,
                    d.b.data(), p.b_signed, d.ldb, d.b_zp.data(), p.b_zp_per_col, d.ref.data(), p.n);
    return d;
  }

  void CheckInt32(const Problem& p, ThreadPool* pool = nullptr) {
    const Data d = Make(p);
    const PackedQ8B packed(p.trans_b, p.k, p.n, d.b.data(), p.b_signed, d.ldb, d.b_zp.data(), p.b_zp_per_col, pool);
    ASSERT_EQ(std::string(packed.kernel_name()).find(GetParam()), std::string("q8_gemm_").size());
    const int64_t ldc = p.n + 4;
    std::vector<int32_t> c(static_cast<size_t>(p.m * ldc), 12345);
    Q8Output out;
    out.c = c.data();
    out.ldc = ldc;
    Q8Gemm(p.m, d.a.data(), p.a_signed, d.lda, d.a_zp.data(), p.a_zp_per_row, packed, out, pool);
    for (int64_t i = 0; i < p.m; ++i) {
      for (int64_t j = 0; j < p.n; ++j)
        ASSERT_EQ(c[static_cast<size_t>(i * ldc + j)], d.ref[static_cast<size_t>(i * p.n + j)])
            << "at (" << i << ", " << j << ") of " << p.m << "x" << p.n << "x" << p.k;
      for (int64_t j = p.n; j < ldc; ++j) ASSERT_EQ(c[static_cast<size_t>(i * ldc + j)], 12345) << "wrote past N";
    }
  }

  std::mt19937 rng_{15};
};

TEST_P(Int8GemmVariant, MatchesReferenceOnOddSizes) {
  for (bool as : {false, true})
    for (bool bs : {false, true})
      for (const auto& [m, n, k] : std::vector<std::array<int64_t, 3>>{
               {1, 1, 1}, {3, 5, 7}, {7, 33, 13}, {13, 17, 64}, {9, 31, 130}, {17, 65, 3}, {26, 40, 257},
               // whole panels of whole 4-row groups (packed with no zero fill first), and a partial one
               {5, 96, 128}, {6, 69, 64}})
        CheckInt32({m, n, k, as, bs, false, false, false});
}

TEST_P(Int8GemmVariant, ZeroPointsPerRowAndColumnAndTransposedB) {
  for (bool trans : {false, true})
    for (bool per_row : {false, true})
      for (bool per_col : {false, true}) {
        CheckInt32({11, 37, 29, false, true, trans, per_row, per_col});
        CheckInt32({5, 19, 66, true, false, trans, per_row, per_col});
      }
}

TEST_P(Int8GemmVariant, LongKWithThreads) {
  ThreadPool pool(3);
  CheckInt32({37, 70, 1031, false, true, false, false, true}, &pool);
  CheckInt32({2, 300, 515, true, true, true, true, false}, &pool);  // few rows: columns split
}

TEST_P(Int8GemmVariant, EmptyK) { CheckInt32({4, 9, 0, false, true, false, true, true}); }

TEST_P(Int8GemmVariant, FloatAndQuantizedOutputStages) {
  const Problem p{19, 45, 77, false, true, false, false, true};
  const Data d = Make(p);
  const PackedQ8B packed(false, p.k, p.n, d.b.data(), p.b_signed, d.ldb, d.b_zp.data(), true);
  std::vector<float> scale(static_cast<size_t>(p.n)), bias(static_cast<size_t>(p.n));
  std::vector<int32_t> bias_int(static_cast<size_t>(p.n));
  std::uniform_real_distribution<float> s(2e-4f, 3e-3f), bf(-2.0f, 2.0f);
  std::uniform_int_distribution<int32_t> bi(-30000, 30000);
  for (int64_t j = 0; j < p.n; ++j) scale[j] = s(rng_), bias[j] = bf(rng_), bias_int[j] = bi(rng_);
  // Dequantized, transposed output (the convolution's NCHW layout).
  std::vector<float> yf(static_cast<size_t>(p.m * p.n));
  Q8Output fo;
  fo.kind = Q8Output::kFloat;
  fo.c = yf.data();
  fo.ldc = p.m;
  fo.transposed = true;
  fo.scale = scale.data();
  fo.scale_per_column = true;
  fo.bias = bias.data();
  Q8Gemm(p.m, d.a.data(), false, d.lda, d.a_zp.data(), false, packed, fo, nullptr);
  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t j = 0; j < p.n; ++j) {  // one rounding apart: the ISA may fuse the multiply-add
      const float want = static_cast<float>(d.ref[i * p.n + j]) * scale[j] + bias[j];
      ASSERT_NEAR(yf[j * p.m + i], want, 2e-6f * std::max(1.0f, std::fabs(want)));
    }
  // Requantized to int8 and uint8: rounding half to even, saturation.
  for (bool out_signed : {false, true}) {
    std::vector<uint8_t> yq(static_cast<size_t>(p.m * p.n));
    Q8Output qo;
    qo.kind = Q8Output::kQuantized;
    qo.c = yq.data();
    qo.ldc = p.n;
    qo.scale = scale.data();
    qo.scale_per_column = true;
    qo.bias_int = bias_int.data();
    qo.zero_point = out_signed ? -3 : 130;
    qo.out_signed = out_signed;
    Q8Gemm(p.m, d.a.data(), false, d.lda, d.a_zp.data(), false, packed, qo, nullptr);
    int saturated = 0;
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t j = 0; j < p.n; ++j) {
        const float v = static_cast<float>(d.ref[i * p.n + j] + bias_int[j]) * scale[j];
        const double q = std::clamp(std::nearbyint(static_cast<double>(v)) + qo.zero_point, out_signed ? -128.0 : 0.0,
                                    out_signed ? 127.0 : 255.0);
        const int got = out_signed ? static_cast<int8_t>(yq[i * p.n + j]) : yq[i * p.n + j];
        ASSERT_EQ(got, static_cast<int>(q)) << "at (" << i << ", " << j << ")";
        saturated += q == (out_signed ? -128.0 : 0.0) || q == (out_signed ? 127.0 : 255.0);
      }
    EXPECT_GT(saturated, 0) << "the scales should drive some values past the range";
    EXPECT_LT(saturated, p.m * p.n / 2);
  }
}

// Every output kind equals the scalar kernel's bit for bit on full-width tiles and tails, with
// zero points per tensor, row, column (equal or not), and B's 0 (A's row sums then skipped): the
// AVX-512 kernels finish full-width tiles in registers (q8_gemm_finish_avx512.h), the scalar one
// through the generic stage.
TEST_P(Int8GemmVariant, OutputStagesEqualScalarBitForBit) {
  const Problem shapes[] = {{72, 69, 100, false, true, false, false, false},   // one zero point each, B's 0
                            {40, 64, 256, false, false, false, true, false},   // per row of A
                            {33, 96, 130, true, true, false, false, true},     // per column of B
                            {64, 70, 64, false, true, true, true, true}};      // both
  for (const Problem& p : shapes) {
    Data d = Make(p);
    if (p.b_zp_per_col && p.m == 64) std::fill(d.b_zp.begin(), d.b_zp.end(), d.b_zp[0]);  // per column, all equal
    if (p.m == 72) d.b_zp[0] = 0;  // int8 B's zero point 0: A's row sums are then not made
    std::vector<float> scale(static_cast<size_t>(p.n)), bias(static_cast<size_t>(p.n));
    std::vector<int32_t> bias_int(static_cast<size_t>(p.n));
    std::uniform_real_distribution<float> s(2e-4f, 3e-3f), bf(-2.0f, 2.0f);
    std::uniform_int_distribution<int32_t> bi(-30000, 30000);
    for (int64_t j = 0; j < p.n; ++j) scale[j] = s(rng_), bias[j] = bf(rng_), bias_int[j] = bi(rng_);
    for (int kind = 0; kind < 4; ++kind) {
      std::vector<std::vector<uint8_t>> results;
      for (const std::string& isa : {GetParam(), std::string("scalar")}) {
        ASSERT_TRUE(ForceQ8Isa(isa));
        const PackedQ8B packed(p.trans_b, p.k, p.n, d.b.data(), p.b_signed, d.ldb, d.b_zp.data(), p.b_zp_per_col);
        std::vector<uint8_t> y(static_cast<size_t>(p.m * p.n * 4), 0);
        Q8Output out;
        out.c = y.data();
        out.ldc = p.n;
        out.scale = scale.data();
        out.scale_per_column = kind != 2;
        if (kind == 1) out.kind = Q8Output::kFloat, out.bias = bias.data();
        if (kind >= 2) out.kind = Q8Output::kQuantized, out.bias_int = kind == 3 ? bias_int.data() : nullptr;
        out.out_signed = kind == 3;
        out.zero_point = kind == 3 ? -3 : 130;
        Q8Gemm(p.m, d.a.data(), p.a_signed, d.lda, d.a_zp.data(), p.a_zp_per_row, packed, out, nullptr);
        results.push_back(std::move(y));
      }
      EXPECT_EQ(results[0], results[1]) << "output kind " << kind << " on " << p.m << "x" << p.n << "x" << p.k;
    }
    ASSERT_TRUE(ForceQ8Isa(GetParam()));
  }
}

INSTANTIATE_TEST_SUITE_P(AllIsas, Int8GemmVariant, ::testing::Values("amx", "avx512vnni", "avx2", "scalar"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace onyx::linalg
