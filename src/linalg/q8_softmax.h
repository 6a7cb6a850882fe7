// Q8SoftmaxRows: com.microsoft QLinearSoftmax over contiguous rows of 8-bit codes with ONNX
// Runtime's lookup-table arithmetic, up to kQ8SoftmaxRows rows at a time. For each row:
//   e[i] = exp_table[255 - (row max - x[i])]   (codes compared in their type's order)
//   sum  = e[0] + e[1] + ...                    (in element order)
//   y[i] = clamp(round_half_even(e[i] * y_mult / sum) + zy)   (float arithmetic, in this order)
// Per ISA, best first: AVX-512 (the table read by two-register permutes), AVX2 (by gathers),
// scalar, each with the rows' sums as scalar chains side by side; all give the same codes.
#pragma once

#include <cstdint>

namespace onyx::linalg {

inline constexpr int64_t kQ8SoftmaxRows = 16;

// `rows` (1 to kQ8SoftmaxRows) rows of D codes at x, results at y (same layout). exp_table:
// 256 floats, entry j for a code 255 - j below its row's maximum. scratch: rows * D floats. The
// caller makes sure y_mult < 2^22 and exp_table[255] * y_mult is finite (so the rounding trick
// is exact). False, with nothing written to y, when a row's sum is not positive: the caller's
// general loop decides those rows.
bool Q8SoftmaxRows(const uint8_t* x, int64_t rows, int64_t D, bool is_signed, const float* exp_table, float y_mult,
                   int32_t zy, float* scratch, uint8_t* y);

// Each variant, for tests (a variant runs only where the CPU has its ISA).
bool Q8SoftmaxRowsScalar(const uint8_t* x, int64_t rows, int64_t D, bool is_signed, const float* exp_table,
                         float y_mult, int32_t zy, float* scratch, uint8_t* y);
#if defined(__x86_64__)
bool Q8SoftmaxRowsAvx512(const uint8_t* x, int64_t rows, int64_t D, bool is_signed, const float* exp_table,
                         float y_mult, int32_t zy, float* scratch, uint8_t* y);
bool Q8SoftmaxRowsAvx2(const uint8_t* x, int64_t rows, int64_t D, bool is_signed, const float* exp_table,
                       float y_mult, int32_t zy, float* scratch, uint8_t* y);
#endif

}  // namespace onyx::linalg
