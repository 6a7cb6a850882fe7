// Softmax (one thread per softmax row, over [outer, axis, inner]) and LayerNormalization (one
// block per row, two block reductions), accumulating in float whatever the storage type.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "device_float.cuh"
#include "launchers.h"

namespace onyx::cuda {
namespace {

template <typename T>
__global__ void SoftmaxKernel(const T* x, T* y, int64_t outer, int64_t axis, int64_t inner, bool log) {
  const int64_t row = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (row >= outer * inner) return;
  const int64_t base = (row / inner) * axis * inner + row % inner;
  float max_value = -INFINITY;
  for (int64_t k = 0; k < axis; ++k) max_value = fmaxf(max_value, Load(x, base + k * inner));
  float sum = 0;
  for (int64_t k = 0; k < axis; ++k) sum += expf(Load(x, base + k * inner) - max_value);
  const float log_sum = logf(sum);
  for (int64_t k = 0; k < axis; ++k) {
    const float shifted = Load(x, base + k * inner) - max_value;
    Store(y, base + k * inner, log ? shifted - log_sum : expf(shifted) / sum);
  }
}

constexpr int kThreads = 256;

__device__ float BlockSum(float v, float* shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) shared[threadIdx.x] += shared[threadIdx.x + stride];
    __syncthreads();
  }
  const float total = shared[0];
  __syncthreads();
  return total;
}

template <typename T>
__global__ void LayerNormKernel(const T* x, const T* scale, const T* bias, T* y, int64_t n, float epsilon) {
  __shared__ float shared[kThreads];
  const int64_t base = blockIdx.x * n;
  float sum = 0;
  for (int64_t k = threadIdx.x; k < n; k += kThreads) sum += Load(x, base + k);
  const float mean = BlockSum(sum, shared) / static_cast<float>(n);
  float squares = 0;
  for (int64_t k = threadIdx.x; k < n; k += kThreads) {
    const float d = Load(x, base + k) - mean;
    squares += d * d;
  }
  const float inv_std = rsqrtf(BlockSum(squares, shared) / static_cast<float>(n) + epsilon);
  for (int64_t k = threadIdx.x; k < n; k += kThreads) {
    const float b = bias != nullptr ? Load(bias, k) : 0.0f;
    Store(y, base + k, (Load(x, base + k) - mean) * inv_std * Load(scale, k) + b);
  }
}

template <typename T>
void Softmax(const void* x, void* y, int64_t outer, int64_t axis, int64_t inner, bool log, cudaStream_t stream) {
  const int64_t rows = outer * inner;
  if (rows == 0 || axis == 0) return;
  SoftmaxKernel<<<static_cast<unsigned>((rows + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
      static_cast<const T*>(x), static_cast<T*>(y), outer, axis, inner, log);
}

template <typename T>
void LayerNorm(const void* x, const void* scale, const void* bias, void* y, int64_t rows, int64_t n, float epsilon,
               cudaStream_t stream) {
  if (rows == 0 || n == 0) return;
  LayerNormKernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
      static_cast<const T*>(x), static_cast<const T*>(scale), static_cast<const T*>(bias), static_cast<T*>(y), n,
      epsilon);
}

}  // namespace

void LaunchSoftmax(Dtype dtype, const void* x, void* y, int64_t outer, int64_t axis, int64_t inner, bool log,
                   cudaStream_t stream) {
  if (dtype == Dtype::kFloat) Softmax<float>(x, y, outer, axis, inner, log, stream);
  if (dtype == Dtype::kHalf) Softmax<__half>(x, y, outer, axis, inner, log, stream);
  if (dtype == Dtype::kBFloat16) Softmax<__nv_bfloat16>(x, y, outer, axis, inner, log, stream);
}

void LaunchLayerNorm(Dtype dtype, const void* x, const void* scale, const void* bias, void* y, int64_t rows, int64_t n,
                     float epsilon, cudaStream_t stream) {
  if (dtype == Dtype::kFloat) LayerNorm<float>(x, scale, bias, y, rows, n, epsilon, stream);
  if (dtype == Dtype::kHalf) LayerNorm<__half>(x, scale, bias, y, rows, n, epsilon, stream);
  if (dtype == Dtype::kBFloat16) LayerNorm<__nv_bfloat16>(x, scale, bias, y, rows, n, epsilon, stream);
}

}  // namespace onyx::cuda
