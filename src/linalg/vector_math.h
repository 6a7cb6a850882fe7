// Vectorized f32 math over arrays: transcendental functions, activations, binary arithmetic,
// reductions and the fused row kernels of softmax and layer / RMS normalization.
//
// Every function runs the best variant the CPU supports (AVX-512, then AVX2 + FMA, then the
// scalar reference built on std:: math), chosen once per family by a best-first chain
// (f32_vector_config.cc). ForceVectorIsa or the environment variable ONYX_VECTOR_ISA (this
// family only) or ONYX_LINALG_ISA (GEMM too) pick a smaller ISA for tests and benchmarks.
//
// Conventions: n counts elements; outputs may be the inputs themselves (y == x) but must not
// partially overlap them; pointers need no alignment. Nothing here allocates or uses threads:
// callers split big arrays across their thread pool.
//
// Accuracy (measured by tests/unit/linalg/vector_math_test.cc against double-precision std::
// math over the whole float range): worst cases exp 1, log 1, tanh 1.5, erf 2.5, sigmoid 2.6,
// softplus 2, silu 3.1 and GELU-erf 6 ulp (all under rel 1e-6); GELU-tanh 4 ulp plus the
// rounding of its argument (|2y| ulp, as in any float evaluation). NaN propagates; infinities
// and overflow give the function's limits; exp produces denormals. Results below ~1e-37 in the
// far tails (silu, GELU at x < -13.2) may lose their digits or be 0.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace onyx::linalg {

// ---- unary functions: y[i] = f(x[i]) ----
void VecExp(const float* x, float* y, size_t n);
void VecLog(const float* x, float* y, size_t n);
void VecTanh(const float* x, float* y, size_t n);
void VecErf(const float* x, float* y, size_t n);
void VecSigmoid(const float* x, float* y, size_t n);   // 1 / (1 + exp(-x))
void VecSilu(const float* x, float* y, size_t n);      // x * sigmoid(x)
// ONNX Runtime's logistic, bit for bit (MLAS's rational approximation: clamp to [-18, 18],
// x P(x^2) / Q(x^2) + 1/2, clamp to [0, 1]): for a sigmoid whose result is quantized next, where
// a last-bit difference moves a code or a dynamic range. Far less accurate than VecSigmoid where
// the sigmoid is small (its absolute error is near 1e-7 there).
void VecSigmoidAsOnnxRuntime(const float* x, float* y, size_t n);
// ONNX Runtime's erf, bit for bit (MLAS's: a polynomial to 0.921875, 1 - exp(-polynomial) beyond,
// its own exp): for an Erf whose result is quantized next (a quantized GELU), as above.
void VecErfAsOnnxRuntime(const float* x, float* y, size_t n);
// ONNX Runtime's tanh, bit for bit (MLAS's rational approximation: clamp to [-9, 9],
// x P(x^2) / Q(x^2)): for a Tanh whose result is quantized next, as above.
void VecTanhAsOnnxRuntime(const float* x, float* y, size_t n);
void VecSoftplus(const float* x, float* y, size_t n);  // log(1 + exp(x))
void VecGeluErf(const float* x, float* y, size_t n);   // 0.5 x (1 + erf(x / sqrt(2)))
void VecGeluTanh(const float* x, float* y, size_t n);  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))

// ---- binary arithmetic ----
// Max / Min return NaN when either operand is NaN (numpy.maximum / minimum), and b when a and b
// compare equal (+0 and -0).
enum class BinaryOp { kAdd, kSub, kMul, kDiv, kMax, kMin };

void VecBinary(BinaryOp op, const float* a, const float* b, float* y, size_t n);  // y[i] = a[i] op b[i]
void VecBinaryScalar(BinaryOp op, const float* a, float b, float* y, size_t n);   // y[i] = a[i] op b
void VecScalarBinary(BinaryOp op, float a, const float* b, float* y, size_t n);   // y[i] = a op b[i]
// A row broadcast over rows (a bias): y[r * cols + c] = a[r * cols + c] op row[c], or, with
// row_first, row[c] op a[r * cols + c].
void VecBinaryRows(BinaryOp op, const float* a, const float* row, float* y, size_t rows, size_t cols,
                   bool row_first = false);

// ---- reductions of a contiguous run (sums accumulate in double) ----
double ReduceSum(const float* x, size_t n);
double ReduceSumSquares(const float* x, size_t n);
double ReduceSumAbs(const float* x, size_t n);
float ReduceMax(const float* x, size_t n);  // NaN if any element is NaN; -inf when n == 0
float ReduceMin(const float* x, size_t n);  // NaN if any element is NaN; +inf when n == 0

// Across rows: one row folded into per-column accumulators, acc[i] (op)= x[i]. Max / Min keep a
// NaN once one is seen.
void AccumulateSum(const float* x, double* acc, size_t n);
void AccumulateSumSquares(const float* x, double* acc, size_t n);
void AccumulateSumAbs(const float* x, double* acc, size_t n);
void AccumulateMax(const float* x, float* acc, size_t n);
void AccumulateMin(const float* x, float* acc, size_t n);

// ---- fused row kernels ----
// Softmax / log-softmax of one contiguous row of n > 0 elements (three passes: max,
// exp-and-sum, scale).
void SoftmaxRow(const float* x, float* y, size_t n);
void LogSoftmaxRow(const float* x, float* y, size_t n);
// The same along the first axis of an [n, inner] block (softmax over an axis that is not the
// last): every column is normalized. scratch holds 2 * inner floats.
void SoftmaxColumns(const float* x, float* y, size_t n, size_t inner, float* scratch);
void LogSoftmaxColumns(const float* x, float* y, size_t n, size_t inner, float* scratch);

// y = (x - mean) / sqrt(var + epsilon) * scale + bias over one row of n elements; mean and
// variance come from one pass accumulating in double. Null scale means 1, null bias 0;
// mean / inv_std_dev, when not null, receive the row's statistics.
void LayerNormRow(const float* x, float* y, size_t n, const float* scale, const float* bias, float epsilon, float* mean,
                  float* inv_std_dev);
// y = x / sqrt(mean(x^2) + epsilon) * scale; inv_rms, when not null, receives 1 / that root.
void RmsNormRow(const float* x, float* y, size_t n, const float* scale, float epsilon, float* inv_rms);

// ---- ISA selection for every function above ----
// ForceVectorIsa("avx512" | "avx2" | "scalar") returns false (and changes nothing) for an
// unknown ISA or one this CPU lacks; "" or "auto" restores the best. Meant for tests and
// benchmarks. Independent of the GEMM's ForceIsa.
bool ForceVectorIsa(std::string_view isa);
std::string VectorIsa();                         // the ISA in use now
std::vector<std::string> SupportedVectorIsas();  // best first, "scalar" last

}  // namespace onyx::linalg
