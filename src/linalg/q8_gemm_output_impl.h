// The int8 GEMM's output stage (q8_gemm.h's Q8Output) for one finished tile, instantiated in each
// ISA's microkernel file so that its row loops are vectorized with that ISA's registers (at small
// K, e.g. pointwise convolutions, this stage costs more than the products). Internal linkage on
// purpose (see f32_gemm_tile_impl.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "linalg/q8_gemm.h"

namespace onyx::linalg {
namespace {

constexpr float kRoundMagic = 12582912.0f;  // 1.5 * 2^23

inline int32_t Wrap(uint32_t v) { return static_cast<int32_t>(v); }

// Row r of the finished tile with its zero-point terms, into v[0:cols]:
//   v = acc - zb' (sum a' - K za') - za' sum b'   (uint32: the int32 wrap ONNX allows)
// Plain loops over contiguous columns, which the compiler vectorizes. col_term: null, or
// za' sum b' already made for this row's za' (kShareTerms below); row_term_zero: every zb' of
// the tile's columns is 0, so the row term is 0 too.
inline void CorrectRow(const int32_t* acc, int cols, int64_t k, int32_t row_sum, int32_t row_zero,
                       const int32_t* col_sums, const int32_t* col_zero, int32_t* v,
                       const uint32_t* col_term = nullptr, bool row_term_zero = false) {
  const auto za = static_cast<uint32_t>(row_zero);
  const uint32_t t = static_cast<uint32_t>(row_sum) - static_cast<uint32_t>(k) * za;
  if (col_term != nullptr && row_term_zero) {
    for (int c = 0; c < cols; ++c) v[c] = Wrap(static_cast<uint32_t>(acc[c]) - col_term[c]);
    return;
  }
  if (col_term != nullptr) {
    for (int c = 0; c < cols; ++c)
      v[c] = Wrap(static_cast<uint32_t>(acc[c]) - static_cast<uint32_t>(col_zero[c]) * t - col_term[c]);
    return;
  }
  for (int c = 0; c < cols; ++c)
    v[c] = Wrap(static_cast<uint32_t>(acc[c]) - static_cast<uint32_t>(col_zero[c]) * t -
                za * static_cast<uint32_t>(col_sums[c]));
}

// The tile's finished rows (staged [rows][kMaxCols]) into C, or into C^T column by column.
constexpr int kMaxRows = 16, kMaxCols = 256;

template <int kMr, typename T>
inline void StoreTile(const Q8Output& out, int64_t i0, int rows, int64_t j0, int cols, const T (*stage)[kMaxCols]) {
  T* c = static_cast<T*>(out.c);
  if (!out.transposed) {
    for (int r = 0; r < rows; ++r)
      std::memcpy(c + (i0 + r) * out.ldc + j0, stage[r], static_cast<size_t>(cols) * sizeof(T));
    return;
  }
  for (int j = 0; j < cols; ++j) {
    // Element stores straight from the stage: gathering a column on the stack and copying it
    // as one word stalled on store forwarding (half the time of a pointwise convolution).
    T* dst = c + (j0 + j) * out.ldc + i0;
    if (rows == kMr) {
      for (int r = 0; r < kMr; ++r) dst[r] = stage[r][j];
    } else {
      for (int r = 0; r < rows; ++r) dst[r] = stage[r][j];
    }
  }
}

// The finished tile: zero-point terms, then the output stage (rows <= kMr <= kMaxRows, cols <=
// kMaxCols: the microkernel's MR and NR). kCols > 0: cols is that constant, so every row loop
// has a fixed trip count (full tiles; with a run-time width the compiler's loops paid for
// remainders, and at small K this stage cost as much as the products). kShareTerms: the column
// term za' sum b' is made once for the first row's za' and reused by the rows with the same
// za', and the row term is skipped when the tile's zb' are all 0 (as the AVX-512 stage does:
// the AVX2 tile at 784x128x128 ran 2 vpmulld an output vector; same values, wrap included).
template <int kMr, int kCols, bool kShareTerms = false>
inline void FinishTileBody(const Q8Output& out, int64_t k, const int32_t* acc, int nr_stride, int64_t i0, int rows,
                           int64_t j0, int cols, const int32_t* row_sums, const int32_t* row_zero,
                           const int32_t* col_sums, const int32_t* col_zero) {
  if constexpr (kCols > 0) cols = kCols;
  alignas(64) int32_t v[kMaxRows][kMaxCols];
  alignas(64) float sc[kMaxCols];
  for (int c = 0; c < cols; ++c) sc[c] = out.scale == nullptr ? 1.0f : out.scale[out.scale_per_column ? j0 + c : 0];
  if constexpr (kShareTerms) {
    alignas(64) uint32_t col_term[kMaxCols];
    const auto za0 = static_cast<uint32_t>(row_zero[0]);
    uint32_t any_zb = 0;
    for (int c = 0; c < cols; ++c) {
      col_term[c] = za0 * static_cast<uint32_t>(col_sums[c]);
      any_zb |= static_cast<uint32_t>(col_zero[j0 + c]);
    }
    for (int r = 0; r < rows; ++r)
      CorrectRow(acc + r * nr_stride, cols, k, row_sums[r], row_zero[r], col_sums, col_zero + j0, v[r],
                 static_cast<uint32_t>(row_zero[r]) == za0 ? col_term : nullptr, any_zb == 0);
  } else {
    for (int r = 0; r < rows; ++r)
      CorrectRow(acc + r * nr_stride, cols, k, row_sums[r], row_zero[r], col_sums, col_zero + j0, v[r]);
  }
  switch (out.kind) {
    case Q8Output::kInt32: StoreTile<kMr>(out, i0, rows, j0, cols, v); break;
    case Q8Output::kFloat: {
      alignas(64) float f[kMaxRows][kMaxCols];
      alignas(64) float bias[kMaxCols];
      for (int c = 0; c < cols; ++c) bias[c] = out.bias != nullptr ? out.bias[j0 + c] : 0.0f;
      // Product and bias each rounded (as ONNX Runtime's MatMulIntegerToFloat adds its bias
      // after the scaled product): two statements, so no compiler contracts them into one fma
      // (GCC's ISO mode never does; clang's default contracts within one expression).
      for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) f[r][c] = static_cast<float>(v[r][c]) * sc[c];
      for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) f[r][c] += bias[c];
      StoreTile<kMr>(out, i0, rows, j0, cols, f);
      break;
    }
    case Q8Output::kQuantized: {
      alignas(64) uint8_t q[kMaxRows][kMaxCols];
      alignas(64) uint32_t bias[kMaxCols];
      for (int c = 0; c < cols; ++c) bias[c] = out.bias_int != nullptr ? static_cast<uint32_t>(out.bias_int[j0 + c]) : 0u;
      const float lo = (out.out_signed ? -128.0f : 0.0f) - static_cast<float>(out.zero_point);
      const float hi = (out.out_signed ? 127.0f : 255.0f) - static_cast<float>(out.zero_point);
      // Clamped in float first (as ONNX Runtime does), then rounded half to even: adding and
      // subtracting 1.5 * 2^23 rounds a float of magnitude below 2^22 to an integer in the
      // default rounding mode, in a loop the compiler vectorizes (nearbyint is a call).
      for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) {
          const float x = std::min(
              std::max(static_cast<float>(Wrap(static_cast<uint32_t>(v[r][c]) + bias[c])) * sc[c], lo), hi);
          q[r][c] = static_cast<uint8_t>(static_cast<int32_t>((x + kRoundMagic) - kRoundMagic) + out.zero_point);
        }
      StoreTile<kMr>(out, i0, rows, j0, cols, q);
      break;
    }
  }
}

// The microkernel's finish (Q8FinishFn): kNr > 0 runs full-width tiles through the fixed-width
// body; kShareTerms as FinishTileBody's.
template <int kMr, int kNr = 0, bool kShareTerms = false>
void FinishTile(const Q8Output& out, int64_t k, const int32_t* acc, int nr_stride, int64_t i0, int rows, int64_t j0,
                int cols, const int32_t* row_sums, const int32_t* row_zero, const int32_t* col_sums,
                const int32_t* col_zero) {
  if constexpr (kNr > 0) {
    if (cols == kNr) {
      FinishTileBody<kMr, kNr, kShareTerms>(out, k, acc, nr_stride, i0, rows, j0, cols, row_sums, row_zero, col_sums, col_zero);
      return;
    }
  }
  FinishTileBody<kMr, 0, kShareTerms>(out, k, acc, nr_stride, i0, rows, j0, cols, row_sums, row_zero, col_sums, col_zero);
}

}  // namespace
}  // namespace onyx::linalg
