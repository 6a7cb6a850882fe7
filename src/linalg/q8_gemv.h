// 8-bit matrix-vector product with int32 accumulation, for one row of A against a constant B
// (com.microsoft QGemm's classifier layers, M = 1):
//   acc[j] = sum_k (a[k] - a_zero) * (B[k, j] - b_zero[j])
// The int8 GEMM computes a whole tile of rows for one (7 of 8 wasted at M = 1); here each group
// of four k of a row is broadcast once against 16 columns of B. B is packed once as int8
// [N / 16][K / 4][16][4] (uint8 codes stored - 128), its column sums kept, so the zero points
// cost one multiply-add per output. Variants (q8_gemv_config.cc): AVX-512 VNNI, then the plain
// loop compiled for AVX2 and for the baseline; the ISA follows the int8 GEMM's (ForceQ8Isa).
#pragma once

#include <cstdint>
#include <vector>

#include "linalg/gemm.h"

namespace onyx::linalg {

class PackedQ8Gemv {
 public:
  PackedQ8Gemv() = default;
  // op(B) [K, N]: b is [K, N] row-major, or [N, K] when trans_b (ldb its row stride); codes
  // int8 when b_signed, else uint8; zero_points one value, or N when zero_per_column.
  PackedQ8Gemv(bool trans_b, int64_t k, int64_t n, const void* b, bool b_signed, int64_t ldb,
               const int32_t* zero_points, bool zero_per_column);

  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  bool empty() const { return !packed_; }
  const int8_t* data() const { return data_.data(); }
  int64_t padded_k() const { return (k_ + 3) / 4 * 4; }
  const int32_t* col_sums() const { return col_sums_.data(); }
  const int32_t* col_zero() const { return col_zero_.data(); }

 private:
  bool packed_ = false;
  int64_t k_ = 0, n_ = 0;
  std::vector<int8_t> data_;
  std::vector<int32_t> col_sums_, col_zero_;  // per column: sum of stored codes, stored zero point
};

// acc[j] for j < N; a is K codes (int8 when a_signed, else uint8). With a pool, groups of
// panels go to the threads (B, 1.3 MB for a 1280 x 1000 classifier, is read once: the product is
// bound by memory, and two cores stream it about twice as fast); each column is the same sum on
// any number of threads.
void Q8Gemv(const void* a, bool a_signed, int32_t a_zero, const PackedQ8Gemv& b, int32_t* acc,
            ThreadPool* pool = nullptr);

// Which variant Q8Gemv runs now ("avx512vnni", "avx2", "scalar").
const char* Q8GemvIsa();

}  // namespace onyx::linalg
