// Elementwise CUDA kernels: binary ops with broadcasting and unary activations, computed in
// float for float16/bfloat16; and the strided gather behind Expand/Transpose.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "device_float.cuh"
#include "launchers.h"

namespace onyx::cuda {
namespace {

template <typename T>
__global__ void BinaryKernel(BinaryOp op, const T* a, const T* b, T* out, int64_t n, Strided s) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{blockDim.x} * gridDim.x) {
    int64_t rest = i, ia = 0, ib = 0;
    for (int d = s.rank - 1; d >= 0; --d) {
      const int64_t idx = rest % s.dims[d];
      rest /= s.dims[d];
      ia += idx * s.a[d];
      ib += idx * s.b[d];
    }
    const float x = Load(a, ia), y = Load(b, ib);
    float r = 0;
    switch (op) {
      case BinaryOp::kAdd: r = x + y; break;
      case BinaryOp::kSub: r = x - y; break;
      case BinaryOp::kMul: r = x * y; break;
      case BinaryOp::kDiv: r = x / y; break;
    }
    Store(out, i, r);
  }
}

template <typename T>
__global__ void UnaryKernel(UnaryOp op, const T* x, T* y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{blockDim.x} * gridDim.x) {
    const float v = Load(x, i);
    float r = 0;
    switch (op) {
      case UnaryOp::kRelu: r = v > 0.0f ? v : 0.0f; break;
      case UnaryOp::kSigmoid: r = 1.0f / (1.0f + expf(-v)); break;
      case UnaryOp::kTanh: r = tanhf(v); break;
      case UnaryOp::kErf: r = erff(v); break;
      case UnaryOp::kGelu: r = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f)); break;
      case UnaryOp::kGeluTanh:
        r = 0.5f * v * (1.0f + tanhf(0.79788456080286536f * (v + 0.044715f * v * v * v)));
        break;
    }
    Store(y, i, r);
  }
}

template <typename T>
__global__ void GatherKernel(const T* x, T* y, int64_t n, Strided s) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{blockDim.x} * gridDim.x) {
    int64_t rest = i, ix = 0;
    for (int d = s.rank - 1; d >= 0; --d) {
      ix += (rest % s.dims[d]) * s.a[d];
      rest /= s.dims[d];
    }
    y[i] = x[ix];
  }
}

constexpr int kThreads = 256;
unsigned Blocks(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 65535 * 16 ? (blocks > 0 ? blocks : 1) : 65535 * 16);
}

}  // namespace

void LaunchBinary(BinaryOp op, Dtype dtype, const void* a, const void* b, void* out, int64_t n, const Strided& s,
                  cudaStream_t stream) {
  if (n == 0) return;
  switch (dtype) {
    case Dtype::kFloat:
      BinaryKernel<<<Blocks(n), kThreads, 0, stream>>>(op, static_cast<const float*>(a), static_cast<const float*>(b),
                                                       static_cast<float*>(out), n, s);
      break;
    case Dtype::kHalf:
      BinaryKernel<<<Blocks(n), kThreads, 0, stream>>>(op, static_cast<const __half*>(a), static_cast<const __half*>(b),
                                                       static_cast<__half*>(out), n, s);
      break;
    case Dtype::kBFloat16:
      BinaryKernel<<<Blocks(n), kThreads, 0, stream>>>(op, static_cast<const __nv_bfloat16*>(a),
                                                       static_cast<const __nv_bfloat16*>(b),
                                                       static_cast<__nv_bfloat16*>(out), n, s);
      break;
    default:
      break;
  }
}

void LaunchUnary(UnaryOp op, Dtype dtype, const void* x, void* y, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  switch (dtype) {
    case Dtype::kFloat:
      UnaryKernel<<<Blocks(n), kThreads, 0, stream>>>(op, static_cast<const float*>(x), static_cast<float*>(y), n);
      break;
    case Dtype::kHalf:
      UnaryKernel<<<Blocks(n), kThreads, 0, stream>>>(op, static_cast<const __half*>(x), static_cast<__half*>(y), n);
      break;
    case Dtype::kBFloat16:
      UnaryKernel<<<Blocks(n), kThreads, 0, stream>>>(op, static_cast<const __nv_bfloat16*>(x),
                                                      static_cast<__nv_bfloat16*>(y), n);
      break;
    default:
      break;
  }
}

void LaunchGather(size_t elem_bytes, const void* x, void* y, int64_t n, const Strided& s, cudaStream_t stream) {
  if (n == 0) return;
  switch (elem_bytes) {
    case 1:
      GatherKernel<<<Blocks(n), kThreads, 0, stream>>>(static_cast<const uint8_t*>(x), static_cast<uint8_t*>(y), n, s);
      break;
    case 2:
      GatherKernel<<<Blocks(n), kThreads, 0, stream>>>(static_cast<const uint16_t*>(x), static_cast<uint16_t*>(y), n, s);
      break;
    case 4:
      GatherKernel<<<Blocks(n), kThreads, 0, stream>>>(static_cast<const uint32_t*>(x), static_cast<uint32_t*>(y), n, s);
      break;
    case 8:
      GatherKernel<<<Blocks(n), kThreads, 0, stream>>>(static_cast<const uint64_t*>(x), static_cast<uint64_t*>(y), n, s);
      break;
    default:
      break;
  }
}

}  // namespace onyx::cuda
