#include "providers/cuda/cuda_options.h"

#include <cstdint>
#include <set>

#include "base/check.h"

namespace onyx {
namespace {

const char* const kKeys[] = {"device_id", "gpu_mem_limit", "arena_extend_strategy", "cudnn_conv_algo_search",
                             "cudnn_conv_use_max_workspace", "cudnn_conv1d_pad_to_nc1d", "do_copy_in_default_stream",
                             "enable_cuda_graph", "use_tf32", "prefer_nhwc", "user_compute_stream",
                             "has_user_compute_stream"};

// ONNX Runtime's other CUDA options: known, not supported by Onyx.
const std::set<std::string> kOrtOnlyKeys = {
    "gpu_external_alloc", "gpu_external_free", "gpu_external_empty_cache", "tunable_op_enable",
    "tunable_op_tuning_enable", "tunable_op_max_tuning_duration_ms", "enable_skip_layer_norm_strict_mode",
    "use_ep_level_unified_stream", "sdpa_kernel", "fuse_conv_bias", "default_memory_arena_cfg",
    "cudnn_conv_use_max_workspace_size", "enable_cuda_graph_capture"};

[[noreturn]] void Bad(const std::string& key, const std::string& value, const std::string& want) {
  ONYX_THROW(kInvalidArgument, "CUDAExecutionProvider option ", key, "='", value, "': ", want);
}

bool ParseBool(const std::string& key, const std::string& v) {
  if (v == "1" || v == "true" || v == "True") return true;
  if (v == "0" || v == "false" || v == "False") return false;
  Bad(key, v, "expected 0, 1, true or false");
}

uint64_t ParseUnsigned(const std::string& key, const std::string& v) {
  if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos) Bad(key, v, "expected a non-negative integer");
  try {
    return std::stoull(v);
  } catch (...) {
    Bad(key, v, "the integer is too large");
  }
}

[[noreturn]] void NotHonoured(const std::string& key, const std::string& value, const std::string& why) {
  ONYX_THROW(kInvalidArgument, "CUDAExecutionProvider option ", key, "='", value,
             "' is not honoured by Onyx's CUDA provider yet: ", why, " (docs/cuda.md)");
}

}  // namespace

CudaOptions ParseCudaOptions(const ProviderOptions& options) {
  CudaOptions o;
  const std::set<std::string> known(std::begin(kKeys), std::end(kKeys));
  bool has_stream_flag = false, has_stream_flag_value = false;
  for (const auto& [key, value] : options) {
    if (!known.count(key)) {
      ONYX_CHECK(!kOrtOnlyKeys.count(key), kInvalidArgument, "CUDAExecutionProvider option ", key,
                 " is ONNX Runtime's but not supported by Onyx (supported: ", StrJoin(known), ")");
      ONYX_THROW(kInvalidArgument, "unknown CUDAExecutionProvider option '", key, "' (known: ", StrJoin(known), ")");
    }
    if (key == "device_id") {
      const uint64_t id = ParseUnsigned(key, value);
      if (id > 1023) Bad(key, value, "expected a device ordinal");
      o.device_id = static_cast<int>(id);
    } else if (key == "gpu_mem_limit") {
      const uint64_t limit = ParseUnsigned(key, value);
      if (limit == 0) Bad(key, value, "the limit must be at least 1 byte");
      o.gpu_mem_limit = static_cast<size_t>(limit);
    } else if (key == "arena_extend_strategy") {
      if (value == "kNextPowerOfTwo" || value == "0") {
        o.arena_extend_strategy = ArenaExtendStrategy::kNextPowerOfTwo;
      } else if (value == "kSameAsRequested" || value == "1") {
        o.arena_extend_strategy = ArenaExtendStrategy::kSameAsRequested;
      } else {
        Bad(key, value, "expected kNextPowerOfTwo or kSameAsRequested");
      }
    } else if (key == "cudnn_conv_algo_search") {
      if (value != "EXHAUSTIVE" && value != "HEURISTIC" && value != "DEFAULT")
        Bad(key, value, "expected EXHAUSTIVE, HEURISTIC or DEFAULT");
      NotHonoured(key, value, "it has no cuDNN convolution kernels (Conv runs on the CPU provider)");
    } else if (key == "cudnn_conv_use_max_workspace" || key == "cudnn_conv1d_pad_to_nc1d") {
      ParseBool(key, value);
      NotHonoured(key, value, "it has no cuDNN convolution kernels (Conv runs on the CPU provider)");
    } else if (key == "do_copy_in_default_stream") {
      if (!ParseBool(key, value))
        NotHonoured(key, value, "copies run on the compute stream; separate copy streams are not implemented");
    } else if (key == "enable_cuda_graph") {
      if (ParseBool(key, value)) NotHonoured(key, value, "CUDA graph capture and replay are not implemented");
    } else if (key == "prefer_nhwc") {
      if (ParseBool(key, value)) NotHonoured(key, value, "it has no NHWC kernels");
    } else if (key == "use_tf32") {
      o.use_tf32 = ParseBool(key, value);
    } else if (key == "has_user_compute_stream") {
      has_stream_flag = true;
      has_stream_flag_value = ParseBool(key, value);
    } else if (key == "user_compute_stream") {
      const uint64_t address = ParseUnsigned(key, value);
      if (address == 0) Bad(key, value, "expected the cudaStream_t's address, not 0");
      o.user_compute_stream = reinterpret_cast<void*>(static_cast<uintptr_t>(address));
    }
  }
  if (has_stream_flag) {
    ONYX_CHECK(has_stream_flag_value == (o.user_compute_stream != nullptr), kInvalidArgument,
               "CUDAExecutionProvider options has_user_compute_stream=", has_stream_flag_value ? "1" : "0", " and ",
               o.user_compute_stream != nullptr ? "a user_compute_stream" : "no user_compute_stream", " disagree");
  }
  return o;
}

}  // namespace onyx
