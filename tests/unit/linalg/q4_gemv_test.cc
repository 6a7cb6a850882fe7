// Q4Gemv (4-bit blockwise weights times a few rows of A, dequantized in registers) against a
// plain double-precision reference written here, for every ISA variant: full and partial last
// blocks, 1..8 rows, strided A and y, bias, column ranges.
#include "linalg/q4_gemm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "linalg/gemm.h"
#include "linalg/isa_variant_test.h"

namespace onyx::linalg {
namespace {

struct Weights {
  int64_t n = 0, k = 0, block = 0, k_blocks = 0;
  std::vector<uint8_t> codes;  // [n, k_blocks, block / 2]
  std::vector<float> scales, zeros;

  int Code(int64_t row, int64_t kk) const {
    const int64_t g = kk / block, j = kk % block;
    const uint8_t byte = codes[static_cast<size_t>((row * k_blocks + g) * (block / 2) + j / 2)];
    return j % 2 == 0 ? byte & 15 : byte >> 4;
  }
};

Weights RandomWeights(int64_t n, int64_t k, int64_t block, std::mt19937& rng) {
  Weights w;
  w.n = n, w.k = k, w.block = block, w.k_blocks = (k + block - 1) / block;
  w.codes.resize(static_cast<size_t>(n * w.k_blocks * block / 2));
  std::uniform_int_distribution<int> byte(0, 255), zero(0, 15);
  std::uniform_real_distribution<float> scale(0.01f, 0.2f);
  for (uint8_t& c : w.codes) c = static_cast<uint8_t>(byte(rng));
  for (int64_t i = 0; i < n * w.k_blocks; ++i) {
    w.scales.push_back(scale(rng));
    w.zeros.push_back(static_cast<float>(zero(rng)));
  }
  return w;
}

class Q4GemvVariant : public LinalgIsaVariant {
 protected:
  void Check(int rows, int64_t n, int64_t k, int64_t block, bool with_bias, int64_t n0, int64_t n1) {
    const Weights w = RandomWeights(n, k, block, rng_);
    const int64_t lda = k + 3, ldy = n + 2;
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> a(static_cast<size_t>(rows * lda)), bias(static_cast<size_t>(n));
    for (float& v : a) v = dist(rng_);
    for (float& v : bias) v = dist(rng_);
    const float kMarker = -12345.0f;
    std::vector<float> y(static_cast<size_t>(rows * ldy), kMarker);
    std::vector<float> permuted(static_cast<size_t>(rows * k));
    Q4PermuteA(a.data(), lda, rows, k, permuted.data());
    Q4Gemv(permuted.data(), k, rows, k, w.codes.data(), block, w.scales.data(), w.zeros.data(),
           with_bias ? bias.data() : nullptr, y.data(), ldy, n0, n1);
    int failures = 0;
    for (int r = 0; r < rows; ++r)
      for (int64_t j = 0; j < ldy; ++j) {
        const float got = y[static_cast<size_t>(r * ldy + j)];
        if (j < n0 || j >= n1) {
          if (got != kMarker && ++failures <= 5) ADD_FAILURE() << "y[" << r << ", " << j << "] outside the range written";
          continue;
        }
        double want = with_bias ? bias[j] : 0.0, mag = std::fabs(want);
        for (int64_t kk = 0; kk < k; ++kk) {
          const int64_t g = kk / block;
          const double q = (w.Code(j, kk) - static_cast<double>(w.zeros[j * w.k_blocks + g])) * w.scales[j * w.k_blocks + g];
          want += a[r * lda + kk] * q;
          mag += std::fabs(a[r * lda + kk] * q);
        }
        if (std::fabs(got - want) > 1e-5 * mag + 1e-6 && ++failures <= 5)
          ADD_FAILURE() << GetParam() << " rows=" << rows << " k=" << k << " block=" << block << ": y[" << r << ", "
                        << j << "] = " << got << ", want " << want;
      }
  }

  std::mt19937 rng_{77};
};

TEST_P(Q4GemvVariant, RowsAndBlocks) {
  for (int rows = 1; rows <= kQ4GemvMaxRows; ++rows)
    for (const int64_t block : {32, 64, 128}) Check(rows, 9, 4 * block, block, rows % 2 == 1, 0, 9);
}

TEST_P(Q4GemvVariant, PartialLastBlockAndColumnRange) {
  for (const int64_t k : {1, 31, 33, 100, 257})
    for (const int rows : {1, 3, 8}) Check(rows, 13, k, 32, true, 2, 11);
  Check(2, 5, 1000, 256, false, 0, 5);
}

// K = 4096: 8 rows take several K slices (each slice's A stays in L1), 1 row takes one.
TEST_P(Q4GemvVariant, DecodeShapesAcrossKSlices) {
  Check(1, 64, 4096, 128, true, 0, 64);
  Check(8, 16, 4096, 32, true, 0, 16);
  Check(5, 7, 4096 + 48, 64, false, 1, 6);
}

INSTANTIATE_TEST_SUITE_P(Isa, Q4GemvVariant, ::testing::Values("avx512", "avx2", "scalar"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace onyx::linalg
