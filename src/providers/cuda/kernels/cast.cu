// Cast between float, float16, bfloat16, int32 and int64 (float to integer truncates toward zero,
// as ONNX Runtime's CUDA Cast does; out-of-range values are undefined, as in C++).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "launchers.h"

namespace onyx::cuda {
namespace {

template <typename T> __device__ __forceinline__ double ToWide(T v) { return static_cast<double>(v); }
template <> __device__ __forceinline__ double ToWide(__half v) { return __half2float(v); }
template <> __device__ __forceinline__ double ToWide(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> __device__ __forceinline__ T FromWide(double v) { return static_cast<T>(v); }
template <> __device__ __forceinline__ __half FromWide(double v) { return __float2half(static_cast<float>(v)); }
template <> __device__ __forceinline__ __nv_bfloat16 FromWide(double v) { return __float2bfloat16(static_cast<float>(v)); }
// Integers to integers directly: a double holds int32 exactly but not every int64.
template <typename To, typename From> __device__ __forceinline__ To Convert(From v) { return FromWide<To>(ToWide(v)); }
template <> __device__ __forceinline__ int64_t Convert(int64_t v) { return v; }
template <> __device__ __forceinline__ int32_t Convert(int64_t v) { return static_cast<int32_t>(v); }
template <> __device__ __forceinline__ int64_t Convert(int32_t v) { return v; }

template <typename From, typename To>
__global__ void CastKernel(const From* x, To* y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{blockDim.x} * gridDim.x)
    y[i] = Convert<To>(x[i]);
}

template <typename From, typename To>
void Cast(const void* x, void* y, int64_t n, cudaStream_t stream) {
  const int64_t blocks = (n + 255) / 256;
  CastKernel<<<static_cast<unsigned>(blocks < 1048560 ? blocks : 1048560), 256, 0, stream>>>(
      static_cast<const From*>(x), static_cast<To*>(y), n);
}

template <typename From>
void CastFrom(Dtype to, const void* x, void* y, int64_t n, cudaStream_t stream) {
  switch (to) {
    case Dtype::kFloat: Cast<From, float>(x, y, n, stream); break;
    case Dtype::kHalf: Cast<From, __half>(x, y, n, stream); break;
    case Dtype::kBFloat16: Cast<From, __nv_bfloat16>(x, y, n, stream); break;
    case Dtype::kInt32: Cast<From, int32_t>(x, y, n, stream); break;
    case Dtype::kInt64: Cast<From, int64_t>(x, y, n, stream); break;
  }
}

}  // namespace

void LaunchCast(Dtype from, Dtype to, const void* x, void* y, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  switch (from) {
    case Dtype::kFloat: CastFrom<float>(to, x, y, n, stream); break;
    case Dtype::kHalf: CastFrom<__half>(to, x, y, n, stream); break;
    case Dtype::kBFloat16: CastFrom<__nv_bfloat16>(to, x, y, n, stream); break;
    case Dtype::kInt32: CastFrom<int32_t>(to, x, y, n, stream); break;
    case Dtype::kInt64: CastFrom<int64_t>(to, x, y, n, stream); break;
  }
}

}  // namespace onyx::cuda
