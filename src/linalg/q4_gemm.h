// Blockwise 4-bit weights (com.microsoft.MatMulNBits layout) times a few rows of float A, with
// the codes dequantized in registers: the packed weights stream from memory once and are never
// expanded into a float buffer.
//
//   y[m, n] = bias[n] + sum_k a[m, k] * (q[n, k] - zero[n, k / block]) * scale[n, k / block]
//
// q[n, k]: row n of b holds ceil(K / block) blobs of block / 2 bytes, two codes a byte, low
// nibble first. block is a multiple of 32; the last block of a row may be partial (K % block).
#pragma once

#include <cstdint>

namespace onyx::linalg {

inline constexpr int kQ4GemvMaxRows = 8;

// A's rows in the order Q4Gemv reads them: in every whole run of 32 values (k = 32c .. 32c+31)
// the even positions first, then the odd ones, matching a byte's low and high nibbles, so the
// kernel needs no shuffles to pair codes with A. Values past the last whole run keep their
// places. out is [rows, k] (leading dimension k).
void Q4PermuteA(const float* a, int64_t lda, int rows, int64_t k, float* out);

// Rows m < rows (1..kQ4GemvMaxRows) of the permuted A (Q4PermuteA, leading dimension lda) and
// columns [n0, n1) of y (leading dimension ldy). scales / zeros: [N, k_blocks] floats; bias
// null or [N]. Runs the ISA the SGEMM uses now (ForceIsa / ONYX_LINALG_ISA apply). No threads:
// callers split the columns.
void Q4Gemv(const float* a, int64_t lda, int rows, int64_t k, const uint8_t* b, int64_t block, const float* scales,
            const float* zeros, const float* bias, float* y, int64_t ldy, int64_t n0, int64_t n1);

}  // namespace onyx::linalg
