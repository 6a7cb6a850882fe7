// The public vector-math entry points: each forwards to its family's selected table
// (f32_vector_config.cc).
#include "linalg/vector_math.h"

#include <cstring>

#include "linalg/f32_vector_kernels.h"
#include "linalg/transpose.h"

namespace onyx::linalg {

void VecExp(const float* x, float* y, size_t n) { SelectedF32VUnary().exp(x, y, n); }
void VecLog(const float* x, float* y, size_t n) { SelectedF32VUnary().log(x, y, n); }
void VecTanh(const float* x, float* y, size_t n) { SelectedF32VUnary().tanh(x, y, n); }
void VecErf(const float* x, float* y, size_t n) { SelectedF32VUnary().erf(x, y, n); }
void VecSigmoid(const float* x, float* y, size_t n) { SelectedF32VUnary().sigmoid(x, y, n); }
void VecSilu(const float* x, float* y, size_t n) { SelectedF32VUnary().silu(x, y, n); }
void VecSigmoidAsOnnxRuntime(const float* x, float* y, size_t n) { SelectedF32VUnary().sigmoid_rational(x, y, n); }
void VecErfAsOnnxRuntime(const float* x, float* y, size_t n) { SelectedF32VUnary().erf_onnx_runtime(x, y, n); }
void VecTanhAsOnnxRuntime(const float* x, float* y, size_t n) { SelectedF32VUnary().tanh_onnx_runtime(x, y, n); }
void VecSoftplus(const float* x, float* y, size_t n) { SelectedF32VUnary().softplus(x, y, n); }
void VecGeluErf(const float* x, float* y, size_t n) { SelectedF32VUnary().gelu_erf(x, y, n); }
void VecGeluTanh(const float* x, float* y, size_t n) { SelectedF32VUnary().gelu_tanh(x, y, n); }

void VecBinary(BinaryOp op, const float* a, const float* b, float* y, size_t n) {
  SelectedF32VBinary().vv(static_cast<int>(op), a, b, y, n);
}
void VecBinaryScalar(BinaryOp op, const float* a, float b, float* y, size_t n) {
  SelectedF32VBinary().vs(static_cast<int>(op), a, b, y, n);
}
void VecScalarBinary(BinaryOp op, float a, const float* b, float* y, size_t n) {
  SelectedF32VBinary().sv(static_cast<int>(op), a, b, y, n);
}
void VecBinaryRows(BinaryOp op, const float* a, const float* row, float* y, size_t rows, size_t cols, bool row_first) {
  const F32VBinaryKernels& k = SelectedF32VBinary();
  for (size_t r = 0; r < rows; ++r) {
    const float* ar = a + r * cols;
    if (row_first)
      k.vv(static_cast<int>(op), row, ar, y + r * cols, cols);
    else
      k.vv(static_cast<int>(op), ar, row, y + r * cols, cols);
  }
}

double ReduceSum(const float* x, size_t n) { return SelectedF32Reduce().sum(x, n); }
double ReduceSumSquares(const float* x, size_t n) { return SelectedF32Reduce().sum_squares(x, n); }
double ReduceSumAbs(const float* x, size_t n) { return SelectedF32Reduce().sum_abs(x, n); }
float ReduceMax(const float* x, size_t n) { return SelectedF32Reduce().max(x, n); }
float ReduceMin(const float* x, size_t n) { return SelectedF32Reduce().min(x, n); }
void AccumulateSum(const float* x, double* acc, size_t n) { SelectedF32Reduce().acc_sum(x, acc, n); }
void AccumulateSumSquares(const float* x, double* acc, size_t n) { SelectedF32Reduce().acc_sum_squares(x, acc, n); }
void AccumulateSumAbs(const float* x, double* acc, size_t n) { SelectedF32Reduce().acc_sum_abs(x, acc, n); }
void AccumulateMax(const float* x, float* acc, size_t n) { SelectedF32Reduce().acc_max(x, acc, n); }
void AccumulateMin(const float* x, float* acc, size_t n) { SelectedF32Reduce().acc_min(x, acc, n); }

void SoftmaxRow(const float* x, float* y, size_t n) {
  if (n > 0) SelectedF32Softmax().softmax_row(x, y, n);
}
void LogSoftmaxRow(const float* x, float* y, size_t n) {
  if (n > 0) SelectedF32Softmax().log_softmax_row(x, y, n);
}
void SoftmaxColumns(const float* x, float* y, size_t n, size_t inner, float* scratch) {
  if (n > 0 && inner > 0) SelectedF32Softmax().softmax_columns(x, y, n, inner, scratch);
}
void LogSoftmaxColumns(const float* x, float* y, size_t n, size_t inner, float* scratch) {
  if (n > 0 && inner > 0) SelectedF32Softmax().log_softmax_columns(x, y, n, inner, scratch);
}

void LayerNormRow(const float* x, float* y, size_t n, const float* scale, const float* bias, float epsilon, float* mean,
                  float* inv_std_dev) {
  if (n > 0) SelectedF32Norm().layer_norm_row(x, y, n, scale, bias, epsilon, mean, inv_std_dev);
}
void RmsNormRow(const float* x, float* y, size_t n, const float* scale, float epsilon, float* inv_rms) {
  if (n > 0) SelectedF32Norm().rms_norm_row(x, y, n, scale, epsilon, inv_rms);
}

void Transpose2D32(const void* in, size_t ld_in, void* out, size_t ld_out, size_t rows, size_t cols) {
  if (rows > 0 && cols > 0) SelectedX32Transpose().transpose_2d(in, ld_in, out, ld_out, rows, cols);
}

void Transpose0213(const void* in, void* out, size_t d0, size_t d1, size_t d2, size_t d3) {
  // out[a, c, b, :] = in[a, b, c, :]: whole rows of d3 elements move.
  const char* src = static_cast<const char*>(in);
  char* dst = static_cast<char*>(out);
  const size_t row = d3 * 4;
  for (size_t a = 0; a < d0; ++a)
    for (size_t c = 0; c < d2; ++c)
      for (size_t b = 0; b < d1; ++b)
        std::memcpy(dst + ((a * d2 + c) * d1 + b) * row, src + ((a * d1 + b) * d2 + c) * row, row);
}

void Transpose0231(const void* in, void* out, size_t d0, size_t d1, size_t d2, size_t d3) {
  // For each a: [d1, d2 * d3] -> [d2 * d3, d1].
  const size_t plane = d1 * d2 * d3 * 4;
  for (size_t a = 0; a < d0; ++a)
    Transpose2D32(static_cast<const char*>(in) + a * plane, d2 * d3, static_cast<char*>(out) + a * plane, d1, d1,
                  d2 * d3);
}

}  // namespace onyx::linalg
