// ONNX Runtime's CUDA provider options as Onyx parses them (docs/cuda.md): each accepted value
// lands in CudaOptions, and unknown keys, bad values and values not honoured yet are errors
// naming the option. Needs no GPU.
#include <gtest/gtest.h>

#include "providers/cuda/cuda_options.h"

namespace onyx {
namespace {

std::string ErrorOf(const ProviderOptions& options) {
  try {
    ParseCudaOptions(options);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    return e.what();
  }
  ADD_FAILURE() << "accepted";
  return "";
}

TEST(CudaOptions, DefaultsAreOnnxRuntimes) {
  const CudaOptions o = ParseCudaOptions({});
  EXPECT_EQ(o.device_id, 0);
  EXPECT_EQ(o.gpu_mem_limit, std::numeric_limits<size_t>::max());
  EXPECT_EQ(o.arena_extend_strategy, ArenaExtendStrategy::kNextPowerOfTwo);
  EXPECT_TRUE(o.use_tf32);
  EXPECT_TRUE(o.do_copy_in_default_stream);
  EXPECT_EQ(o.user_compute_stream, nullptr);
}

TEST(CudaOptions, AcceptedValuesAreParsed) {
  const CudaOptions o = ParseCudaOptions({{"device_id", "2"},
                                          {"gpu_mem_limit", "1073741824"},
                                          {"arena_extend_strategy", "kSameAsRequested"},
                                          {"use_tf32", "0"},
                                          {"do_copy_in_default_stream", "true"},
                                          {"enable_cuda_graph", "0"},
                                          {"prefer_nhwc", "False"},
                                          {"user_compute_stream", "4096"},
                                          {"has_user_compute_stream", "1"}});
  EXPECT_EQ(o.device_id, 2);
  EXPECT_EQ(o.gpu_mem_limit, size_t{1} << 30);
  EXPECT_EQ(o.arena_extend_strategy, ArenaExtendStrategy::kSameAsRequested);
  EXPECT_FALSE(o.use_tf32);
  EXPECT_EQ(o.user_compute_stream, reinterpret_cast<void*>(uintptr_t{4096}));
  EXPECT_EQ(ParseCudaOptions({{"arena_extend_strategy", "0"}}).arena_extend_strategy, ArenaExtendStrategy::kNextPowerOfTwo);
  EXPECT_EQ(ParseCudaOptions({{"arena_extend_strategy", "1"}}).arena_extend_strategy, ArenaExtendStrategy::kSameAsRequested);
}

TEST(CudaOptions, UnknownKeysAndBadValuesNameTheOption) {
  EXPECT_NE(ErrorOf({{"device", "0"}}).find("unknown CUDAExecutionProvider option 'device'"), std::string::npos);
  EXPECT_NE(ErrorOf({{"tunable_op_enable", "1"}}).find("tunable_op_enable is ONNX Runtime's but not supported"),
            std::string::npos);
  EXPECT_NE(ErrorOf({{"device_id", "-1"}}).find("device_id='-1'"), std::string::npos);
  EXPECT_NE(ErrorOf({{"gpu_mem_limit", "lots"}}).find("gpu_mem_limit='lots': expected a non-negative integer"),
            std::string::npos);
  EXPECT_NE(ErrorOf({{"gpu_mem_limit", "0"}}).find("gpu_mem_limit='0'"), std::string::npos);
  EXPECT_NE(ErrorOf({{"arena_extend_strategy", "kDouble"}}).find("expected kNextPowerOfTwo or kSameAsRequested"),
            std::string::npos);
  EXPECT_NE(ErrorOf({{"cudnn_conv_algo_search", "FAST"}}).find("expected EXHAUSTIVE, HEURISTIC or DEFAULT"),
            std::string::npos);
  EXPECT_NE(ErrorOf({{"use_tf32", "yes"}}).find("use_tf32='yes': expected 0, 1, true or false"), std::string::npos);
  EXPECT_NE(ErrorOf({{"user_compute_stream", "0"}}).find("user_compute_stream='0'"), std::string::npos);
  EXPECT_NE(ErrorOf({{"has_user_compute_stream", "1"}}).find("disagree"), std::string::npos);
}

TEST(CudaOptions, ValuesNotHonouredYetAreErrors) {
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"cudnn_conv_algo_search", "HEURISTIC"},
           {"cudnn_conv_use_max_workspace", "1"},
           {"cudnn_conv1d_pad_to_nc1d", "0"},
           {"do_copy_in_default_stream", "0"},
           {"enable_cuda_graph", "1"},
           {"prefer_nhwc", "1"}}) {
    const std::string message = ErrorOf({{key, value}});
    EXPECT_NE(message.find(key + "='" + value + "' is not honoured by Onyx's CUDA provider yet"), std::string::npos)
        << message;
  }
}

}  // namespace
}  // namespace onyx
