// Entry points of the CUDA kernels in this folder's .cu files: plain pointers, sizes and the
// stream, so nvcc compiles only the device code and the kernel classes (.cc) stay C++20.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace onyx::cuda {

enum class Dtype { kFloat, kHalf, kBFloat16, kInt32, kInt64 };
enum class BinaryOp { kAdd, kSub, kMul, kDiv };
enum class UnaryOp { kRelu, kSigmoid, kTanh, kErf, kGelu, kGeluTanh };

constexpr int kMaxRank = 8;

// Output dims and, per operand, the element stride along each output dim (0 where it broadcasts).
struct Strided {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t a[kMaxRank] = {};
  int64_t b[kMaxRank] = {};
};

void LaunchBinary(BinaryOp op, Dtype dtype, const void* a, const void* b, void* out, int64_t n, const Strided& s,
                  cudaStream_t stream);
void LaunchUnary(UnaryOp op, Dtype dtype, const void* x, void* y, int64_t n, cudaStream_t stream);
// y[i] = x[offset of i by s.a], elements of elem_bytes (1, 2, 4 or 8): Expand and Transpose.
void LaunchGather(size_t elem_bytes, const void* x, void* y, int64_t n, const Strided& s, cudaStream_t stream);
void LaunchCast(Dtype from, Dtype to, const void* x, void* y, int64_t n, cudaStream_t stream);
// Softmax over the middle dim of [outer, axis, inner].
void LaunchSoftmax(Dtype dtype, const void* x, void* y, int64_t outer, int64_t axis, int64_t inner, bool log,
                   cudaStream_t stream);
// LayerNormalization over the last n elements of each of `rows` rows; bias may be null.
void LaunchLayerNorm(Dtype dtype, const void* x, const void* scale, const void* bias, void* y, int64_t rows, int64_t n,
                     float epsilon, cudaStream_t stream);

}  // namespace onyx::cuda
