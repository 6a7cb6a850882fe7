// Q8Gemm's driver and output-stage paths for every ISA variant, exact against the scalar
// reference (int32) or the scalar kernel (float and requantized outputs, bit for bit): K around
// the kernels' steps and block sizes (1 to 3072), M and N tails, 1 to 3 threads, and the zero
// point patterns the AVX-512 output stage treats apart (A's zero point per row, equal in some
// rows of a tile and not in others; B's per column, all 0 in some 32-column tiles and not in
// others).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "linalg/q8_gemm.h"
#include "linalg/q8_isa_test.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {
namespace {

struct Case {
  int64_t m, n, k;
  bool a_signed, b_signed;
  bool a_per_row, b_per_col;
};

struct Operands {
  std::vector<uint8_t> a, b;
  std::vector<int32_t> a_zp, b_zp;
  int64_t lda = 0, ldb = 0;
};

class Q8GemmPaths : public ForcedQ8IsaTest {
 protected:
  // Random codes (extremes in places); A's per-row zero points take two values, row 0's in
  // every third row; B's per-column ones are the stored 0 (int8 B: 0, uint8 B: 128) in columns
  // [0, 32) and [64, 96) and random elsewhere.
  Operands Make(const Case& c) {
    Operands d;
    d.lda = c.k + 3;
    d.ldb = c.n + 1;
    std::uniform_int_distribution<int> byte(0, 255);
    d.a.resize(static_cast<size_t>(c.m * d.lda));
    d.b.resize(static_cast<size_t>(c.k * d.ldb));
    for (auto& v : d.a) v = static_cast<uint8_t>(byte(rng_));
    for (auto& v : d.b) v = static_cast<uint8_t>(byte(rng_));
    for (size_t i = 0; i < d.a.size(); i += 11) d.a[i] = c.a_signed ? 0x80 : 0xff;
    for (size_t i = 0; i < d.b.size(); i += 13) d.b[i] = c.b_signed ? 0x80 : 0xff;
    auto zp = [&](bool is_signed) { return is_signed ? byte(rng_) - 128 : byte(rng_); };
    const int32_t za0 = zp(c.a_signed), za1 = zp(c.a_signed);
    for (int64_t i = 0; i < (c.a_per_row ? c.m : 1); ++i) d.a_zp.push_back(i % 3 == 0 ? za0 : za1);
    for (int64_t j = 0; j < (c.b_per_col ? c.n : 1); ++j) {
      const bool stored_zero = c.b_per_col && (j / 32) % 2 == 0;
      d.b_zp.push_back(stored_zero ? (c.b_signed ? 0 : 128) : zp(c.b_signed));
    }
    return d;
  }

  // acc through Q8Output kind `kind` (0 int32, 1 float, 2 uint8, 3 int8) with the selected
  // kernel, as bytes.
  static std::vector<uint8_t> Run(const Case& c, const Operands& d, int kind, ThreadPool* pool) {
    const PackedQ8B packed(false, c.k, c.n, d.b.data(), c.b_signed, d.ldb, d.b_zp.data(), c.b_per_col, pool);
    std::vector<float> scale(static_cast<size_t>(c.n)), bias(static_cast<size_t>(c.n));
    std::vector<int32_t> bias_int(static_cast<size_t>(c.n));
    for (int64_t j = 0; j < c.n; ++j) {
      scale[static_cast<size_t>(j)] = 1e-4f * static_cast<float>(1 + j % 7);
      bias[static_cast<size_t>(j)] = 0.25f * static_cast<float>(j % 5) - 0.5f;
      bias_int[static_cast<size_t>(j)] = static_cast<int32_t>(j * 97 % 4001) - 2000;
    }
    std::vector<uint8_t> y(static_cast<size_t>(c.m * c.n * 4), 0xa5);
    Q8Output out;
    out.c = y.data();
    out.ldc = c.n;
    if (kind == 1) {
      out.kind = Q8Output::kFloat, out.scale = scale.data(), out.scale_per_column = true;
      out.bias = bias.data();
    }
    if (kind >= 2) {
      out.kind = Q8Output::kQuantized, out.scale = scale.data(), out.scale_per_column = true;
      out.bias_int = bias_int.data(), out.out_signed = kind == 3, out.zero_point = kind == 3 ? -5 : 120;
    }
    Q8Gemm(c.m, d.a.data(), c.a_signed, d.lda, d.a_zp.data(), c.a_per_row, packed, out, pool);
    return y;
  }

  // int32 against Q8GemmReference, and the other kinds against the scalar kernel's bytes.
  void Check(const Case& c, ThreadPool* pool) {
    const Operands d = Make(c);
    std::vector<int32_t> ref(static_cast<size_t>(c.m * c.n));
    Q8GemmReference(c.m, c.n, c.k, d.a.data(), c.a_signed, d.lda, d.a_zp.data(), c.a_per_row, false, d.b.data(),
                    c.b_signed, d.ldb, d.b_zp.data(), c.b_per_col, ref.data(), c.n);
    const std::string threads = pool != nullptr ? " threads " + std::to_string(pool->num_threads()) : "";
    const std::string what = GetParam() + " " + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" +
                             std::to_string(c.k) + threads;
    const std::vector<uint8_t> y = Run(c, d, 0, pool);
    ASSERT_EQ(std::memcmp(y.data(), ref.data(), ref.size() * 4), 0) << "int32 differs from the reference, " << what;
    for (int kind = 1; kind < 4; ++kind) {
      const std::vector<uint8_t> got = Run(c, d, kind, pool);
      ASSERT_TRUE(ForceQ8Isa("scalar"));
      const std::vector<uint8_t> want = Run(c, d, kind, nullptr);
      ASSERT_TRUE(ForceQ8Isa(GetParam()));
      ASSERT_EQ(got, want) << "output kind " << kind << " differs from the scalar kernel's, " << what;
    }
  }

  std::mt19937 rng_{2026};
};

TEST_P(Q8GemmPaths, KAroundStepsAndBlocks) {
  for (int64_t k : {1, 3, 4, 63, 64, 65, 257, 1000, 3072})
    Check({19, 45, k, false, true, false, false}, nullptr);
}

TEST_P(Q8GemmPaths, TailsAndZeroPointPatterns) {
  for (bool as : {false, true})
    for (bool bs : {false, true})
      for (bool per_row : {false, true}) {
        Check({37, 130, 200, as, bs, per_row, true}, nullptr);
        Check({8, 64, 96, as, bs, per_row, false}, nullptr);
      }
}

// Small B (a task's panels within half of L1): the driver walks row panels outer, every column
// panel of the task inner; across row blocks, with row and column tails, A packed or in place.
TEST_P(Q8GemmPaths, RowPanelOuterOrderForSmallB) {
  Check({784, 128, 128, false, true, false, false}, nullptr);
  Check({300, 100, 128, true, false, true, true}, nullptr);
  Check({529, 70, 64, false, true, true, true}, nullptr);
  ThreadPool pool(2);
  Check({300, 100, 128, false, true, false, true}, &pool);
}

TEST_P(Q8GemmPaths, ThreadsOverLongK) {
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    Check({45, 100, 3072, false, true, true, true}, &pool);
    Check({130, 70, 1000, true, false, false, true}, &pool);
  }
}

INSTANTIATE_TEST_SUITE_P(AllIsas, Q8GemmPaths, ::testing::Values("amx", "avx512vnni", "avx2", "scalar"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace onyx::linalg
