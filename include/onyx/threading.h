// Threading knobs: custom thread hooks and the process-wide thread pools that sessions may share.
// Names follow ONNX Runtime's (OrtThreadingOptions, CreateEnvWithGlobalThreadPools,
// DisablePerSessionThreads, OrtCustomCreateThreadFn / OrtCustomJoinThreadFn).
#pragma once

#include <string>

namespace onyx {

// A custom thread hook starts a thread that calls fn(fn_param) and returns a handle for it;
// the join hook waits for that thread to end. Give both or neither.
using ThreadWorkerFn = void (*)(void* fn_param);
using CustomThreadHandle = const void*;
using CustomCreateThreadFn = CustomThreadHandle (*)(void* custom_thread_creation_options, ThreadWorkerFn fn,
                                                    void* fn_param);
using CustomJoinThreadFn = void (*)(CustomThreadHandle handle);

// Options of the process-wide pools (ONNX Runtime's OrtThreadingOptions).
struct ThreadingOptions {
  // Threads of the intra-op pool, the calling thread included; 0 = one per physical core (or,
  // with intra_op_thread_affinities, one per affinity entry plus the caller).
  int intra_op_num_threads = 0;
  // Threads running independent nodes for sessions in parallel execution mode; 0 = one per
  // physical core.
  int inter_op_num_threads = 0;
  // Idle workers spin briefly before sleeping (ONNX Runtime's SetGlobalSpinControl).
  bool allow_spinning = true;
  // Same format as the session.intra_op_thread_affinities config entry.
  std::string intra_op_thread_affinities;
  CustomCreateThreadFn custom_create_thread_fn = nullptr;
  void* custom_thread_creation_options = nullptr;
  CustomJoinThreadFn custom_join_thread_fn = nullptr;
};

// Creates the process-wide intra-op and inter-op pools used by sessions whose options set
// use_global_thread_pool. Calling it again replaces them for sessions created afterwards;
// sessions already running keep the pools they started with. Throws Error(kInvalidArgument)
// for bad options.
void SetGlobalThreadPools(const ThreadingOptions& options);
bool HasGlobalThreadPools();
// Drops the process's reference to the global pools; their threads end once no session uses them.
void ReleaseGlobalThreadPools();

}  // namespace onyx
