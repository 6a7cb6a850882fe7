// Checked CUDA and cuBLASLt calls: a failure is Error(kRuntime) naming the call and CUDA's error.
// (src/providers/cuda/ is the only place that includes CUDA headers.)
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include "base/check.h"

namespace onyx {

inline std::string CudaErrorText(cudaError_t e) {
  return StrCat(static_cast<int>(e), " (", cudaGetErrorName(e), ": ", cudaGetErrorString(e), ")");
}

}  // namespace onyx

#define ONYX_CUDA_CALL(expr)                                                                  \
  do {                                                                                        \
    const cudaError_t onyx_cuda_status = (expr);                                              \
    if (onyx_cuda_status != cudaSuccess)                                                      \
      ONYX_THROW(kRuntime, #expr, " returned ", ::onyx::CudaErrorText(onyx_cuda_status));     \
  } while (0)

#define ONYX_CUBLAS_CALL(expr)                                                                \
  do {                                                                                        \
    const cublasStatus_t onyx_cublas_status = (expr);                                         \
    if (onyx_cublas_status != CUBLAS_STATUS_SUCCESS)                                          \
      ONYX_THROW(kRuntime, #expr, " returned ", static_cast<int>(onyx_cublas_status), " (",   \
                 cublasLtGetStatusName(onyx_cublas_status), ")");                             \
  } while (0)
