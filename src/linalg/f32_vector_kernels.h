// One ISA's vector-math kernels, as vector_math.cc sees them: a table per family. The variants
// live in f32_<family>_<isa>.cc; f32_vector_config.cc holds each family's best-first chain.
#pragma once

#include <cstddef>

namespace onyx::linalg {

using F32UnaryFn = void (*)(const float* x, float* y, size_t n);

struct F32VUnaryKernels {
  const char* isa;
  F32UnaryFn exp, log, tanh, erf, sigmoid, silu, softplus, gelu_erf, gelu_tanh;
  F32UnaryFn sigmoid_rational;  // ONNX Runtime's logistic (VecSigmoidAsOnnxRuntime)
  F32UnaryFn erf_onnx_runtime;  // ONNX Runtime's erf (VecErfAsOnnxRuntime)
  F32UnaryFn tanh_onnx_runtime;  // ONNX Runtime's tanh (VecTanhAsOnnxRuntime)
};

// op is a linalg::BinaryOp; each entry handles every op.
struct F32VBinaryKernels {
  const char* isa;
  void (*vv)(int op, const float* a, const float* b, float* y, size_t n);
  void (*vs)(int op, const float* a, float b, float* y, size_t n);  // a[i] op b
  void (*sv)(int op, float a, const float* b, float* y, size_t n);  // a op b[i]
};

struct F32ReduceKernels {
  const char* isa;
  double (*sum)(const float* x, size_t n);
  double (*sum_squares)(const float* x, size_t n);
  double (*sum_abs)(const float* x, size_t n);
  float (*max)(const float* x, size_t n);
  float (*min)(const float* x, size_t n);
  void (*acc_sum)(const float* x, double* acc, size_t n);
  void (*acc_sum_squares)(const float* x, double* acc, size_t n);
  void (*acc_sum_abs)(const float* x, double* acc, size_t n);
  void (*acc_max)(const float* x, float* acc, size_t n);
  void (*acc_min)(const float* x, float* acc, size_t n);
};

struct F32SoftmaxKernels {
  const char* isa;
  void (*softmax_row)(const float* x, float* y, size_t n);
  void (*log_softmax_row)(const float* x, float* y, size_t n);
  void (*softmax_columns)(const float* x, float* y, size_t n, size_t inner, float* scratch);
  void (*log_softmax_columns)(const float* x, float* y, size_t n, size_t inner, float* scratch);
};

struct F32NormKernels {
  const char* isa;
  void (*layer_norm_row)(const float* x, float* y, size_t n, const float* scale, const float* bias, float epsilon,
                         float* mean, float* inv_std_dev);
  void (*rms_norm_row)(const float* x, float* y, size_t n, const float* scale, float epsilon, float* inv_rms);
};

struct X32TransposeKernels {
  const char* isa;
  void (*transpose_2d)(const void* in, size_t ld_in, void* out, size_t ld_out, size_t rows, size_t cols);
};

extern const F32VUnaryKernels kF32VUnaryScalar;
extern const F32VBinaryKernels kF32VBinaryScalar;
extern const F32ReduceKernels kF32ReduceScalar;
extern const F32SoftmaxKernels kF32SoftmaxScalar;
extern const F32NormKernels kF32NormScalar;
extern const X32TransposeKernels kX32TransposeScalar;
#if defined(__x86_64__)
extern const F32VUnaryKernels kF32VUnaryAvx2, kF32VUnaryAvx512;
extern const F32VBinaryKernels kF32VBinaryAvx2, kF32VBinaryAvx512;
extern const F32ReduceKernels kF32ReduceAvx2, kF32ReduceAvx512;
extern const F32SoftmaxKernels kF32SoftmaxAvx2, kF32SoftmaxAvx512;
extern const F32NormKernels kF32NormAvx2, kF32NormAvx512;
extern const X32TransposeKernels kX32TransposeAvx2, kX32TransposeAvx512;
#endif

// The tables in use now (ForceVectorIsa / ONYX_LINALG_ISA, else the best supported).
const F32VUnaryKernels& SelectedF32VUnary();
const F32VBinaryKernels& SelectedF32VBinary();
const F32ReduceKernels& SelectedF32Reduce();
const F32SoftmaxKernels& SelectedF32Softmax();
const F32NormKernels& SelectedF32Norm();
const X32TransposeKernels& SelectedX32Transpose();

}  // namespace onyx::linalg
