// LayerNormRowsCentered: LayerNormalization over contiguous rows of floats with the arithmetic
// of ONNX Runtime 1.31's CPU kernel on x86-64 (MLAS's AVX2 LayerNorm, which it runs for rows of 8
// or more values on any CPU with AVX2 and FMA), for the LayerNormalizations of quantized graphs
// (DequantizeLinear -> LayerNormalization -> QuantizeLinear): there a last-bit difference in a
// float flips the code it rounds to, and the flipped codes grow through the layers after it.
// For each row of n values:
//   mean: the values summed in double in 4 lanes (lane l takes x[i], i = l mod 4, while 4 remain),
//         the lanes added as (l0 + l2) + (l1 + l3), the rest added in order; mean = float(sum / n)
//   var:  d = x[i] - mean (float), d * d accumulated by fma in 8 float lanes (while 8 remain),
//         the lanes added as ((v0 + v4) + (v2 + v6)) + ((v1 + v5) + (v3 + v7)), then the rest's
//         d * d added in order, each product rounded (no fma there: ONNX Runtime's own tail)
//   inv = 1 / sqrt(var / n + epsilon)
//   y[i] = fma((x[i] - mean) * inv, scale[i], bias[i])   (no bias: ((x[i] - mean) * inv) * scale[i])
// Onyx's own LayerNormRow (vector_math.h) takes one pass and multiplies in another order: as
// accurate, but its floats are not ONNX Runtime's. Every variant gives the same floats.
#pragma once

#include <cstdint>

namespace onyx::linalg {

// Rows shorter than this take ONNX Runtime's other (scalar) path there; callers keep their own.
inline constexpr int64_t kLayerNormCenteredMinRow = 8;

// `rows` rows of n floats at x, results at y (same layout). scale: n floats; bias: n floats or
// null. mean / inv_std_dev: null, or one float a row (the mean, and inv as above).
void LayerNormRowsCentered(const float* x, float* y, int64_t rows, int64_t n, const float* scale, const float* bias,
                           float epsilon, float* mean, float* inv_std_dev);

// Each variant, for tests (a variant runs only where the CPU has its ISA).
void LayerNormRowsCenteredScalar(const float* x, float* y, int64_t rows, int64_t n, const float* scale,
                                 const float* bias, float epsilon, float* mean, float* inv_std_dev);
#if defined(__x86_64__)
void LayerNormRowsCenteredAvx2(const float* x, float* y, int64_t rows, int64_t n, const float* scale,
                               const float* bias, float epsilon, float* mean, float* inv_std_dev);
#endif

}  // namespace onyx::linalg
