// A session's thread pools, built from its options and config entries, or taken from the
// process-wide pools of SetGlobalThreadPools (which this file owns).
#pragma once

#include <memory>
#include <string>

#include "onyx/session.h"
#include "platform/thread_pool.h"

namespace onyx {

// Threading config entries SessionOptions accepts (ONNX Runtime's keys and meanings).
inline constexpr const char* kConfigIntraOpAllowSpinning = "session.intra_op.allow_spinning";
inline constexpr const char* kConfigInterOpAllowSpinning = "session.inter_op.allow_spinning";
inline constexpr const char* kConfigIntraOpThreadAffinities = "session.intra_op_thread_affinities";
inline constexpr const char* kConfigDynamicBlockBase = "session.dynamic_block_base";

bool IsThreadingConfigKey(const std::string& key);

struct SessionThreadPools {
  std::shared_ptr<ThreadPool> intra_op;
  std::shared_ptr<ThreadPool> inter_op;  // null in sequential mode
};

// Throws Error(kInvalidArgument) naming the option or config entry that is wrong.
SessionThreadPools CreateSessionThreadPools(const SessionOptions& options);

}  // namespace onyx
