// What CUDA kernels share: the provider's stream and cuBLASLt handle (set by the provider when it
// creates the kernel), and the registration of a kernel with its type constraints.
#pragma once

#include <cuda_runtime.h>

#include <cublasLt.h>

#include "providers/cuda/kernel_types.h"
#include "providers/kernel.h"

namespace onyx {

struct CudaContext {
  int device_id = 0;
  cudaStream_t stream = nullptr;
  cublasLtHandle_t cublas_lt = nullptr;
  bool use_tf32 = true;
};

class CudaKernel : public OpKernel {
 public:
  void SetContext(const CudaContext* context) { context_ = context; }

 protected:
  const CudaContext& cuda() const { return *context_; }
  cudaStream_t stream() const { return context_->stream; }

 private:
  const CudaContext* context_ = nullptr;
};

inline constexpr const char* kCudaProvider = "CUDA";

// ONYX_CUDA_KERNEL(op, since, until, KernelClass, KernelTypes{...}): a registry entry (provider
// "CUDA") and its type constraints.
#define ONYX_CUDA_KERNEL(op, since_version, until_version, KernelClass, ...)                      \
  ONYX_REGISTER_KERNEL(::onyx::kCudaProvider, "", op, since_version, until_version, KernelClass); \
  static ::onyx::KernelTypesRegistrar ONYX_CONCAT(onyx_cuda_types_, __COUNTER__)(::onyx::kCudaProvider, "", op, __VA_ARGS__)

}  // namespace onyx
