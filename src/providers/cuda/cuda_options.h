// ONNX Runtime's CUDA provider options, parsed and checked. Every key the CUDA provider accepts
// changes what it does; a value it cannot honour yet (CUDA graphs, NHWC kernels, cuDNN
// convolutions) is an error naming the option, never silently accepted (docs/cuda.md).
#pragma once

#include <cstddef>
#include <limits>

#include "providers/cuda/device_arena.h"
#include "providers/provider.h"

namespace onyx {

struct CudaOptions {
  int device_id = 0;
  size_t gpu_mem_limit = std::numeric_limits<size_t>::max();
  ArenaExtendStrategy arena_extend_strategy = ArenaExtendStrategy::kNextPowerOfTwo;
  // float MatMul/Gemm on tensor cores in TF32 (ONNX Runtime's default) or in full float.
  bool use_tf32 = true;
  // Copies and kernels on one stream (ONNX Runtime's default, the only way Onyx copies).
  bool do_copy_in_default_stream = true;
  // The caller's cudaStream_t (its address as an integer); null: the provider makes its own.
  void* user_compute_stream = nullptr;
};

// Throws Error(kInvalidArgument) naming the key for an unknown key, a bad value, or a value the
// provider does not honour yet.
CudaOptions ParseCudaOptions(const ProviderOptions& options);

}  // namespace onyx
