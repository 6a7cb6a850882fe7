// The session: load a model once, run it many times (from several threads at once if you
// like). Names follow ONNX Runtime's where they mean the same thing.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "onyx/error.h"
#include "onyx/threading.h"
#include "onyx/value.h"

namespace onyx {

// ONNX Runtime's graph optimization levels.
enum class GraphOptimizationLevel { kDisabled = 0, kBasic = 1, kExtended = 2, kAll = 99 };

// ONNX Runtime's ExecutionMode: ORT_SEQUENTIAL runs one node at a time; ORT_PARALLEL runs
// independent branches of the graph at once on inter_op_num_threads threads.
enum class ExecutionMode { kSequential = 0, kParallel = 1 };

struct SessionOptions {
  GraphOptimizationLevel graph_optimization_level = GraphOptimizationLevel::kAll;
  // When set, the optimized graph is written here as an ONNX model.
  std::string optimized_model_filepath;
  // Threads for parallel loops inside one kernel; 0 = one per physical core (the thread
  // calling Run is one of them).
  int intra_op_num_threads = 0;
  ExecutionMode execution_mode = ExecutionMode::kSequential;
  // Threads running independent nodes in parallel mode (the thread calling Run is one of
  // them); 0 = one per physical core. Unused in sequential mode.
  int inter_op_num_threads = 0;
  // Run on the process-wide pools of SetGlobalThreadPools instead of starting this session's
  // own threads (ONNX Runtime's DisablePerSessionThreads). Thread counts, affinities, spinning
  // and thread hooks then come from ThreadingOptions; setting them here too is an error.
  bool use_global_thread_pool = false;
  // Start this session's threads through these hooks (ONNX Runtime's
  // SessionOptionsSetCustomCreateThreadFn / ...ThreadCreationOptions / ...JoinThreadFn).
  CustomCreateThreadFn custom_create_thread_fn = nullptr;
  void* custom_thread_creation_options = nullptr;
  CustomJoinThreadFn custom_join_thread_fn = nullptr;
  // Reuse freed intermediate buffers across and within Runs (ONNX Runtime's enable_cpu_mem_arena).
  bool enable_cpu_mem_arena = true;
  // Most bytes the CPU arena may hold; 0 = no cap. Reaching it is an Error(kOutOfMemory) that
  // says so, not a crash.
  size_t cpu_arena_max_bytes = 0;
  // Execution providers by priority; CPU is always the fallback. Unknown names are an error.
  // "CUDA" (or "CUDAExecutionProvider") where this build has it: on a machine without a CUDA
  // device, creating the session is then an error naming cudaGetDeviceCount's result.
  std::vector<std::string> execution_providers = {"CPU"};
  // ONNX Runtime's provider options, by provider ("CUDA" or "CUDAExecutionProvider") and key, as
  // strings: {"CUDA": {{"gpu_mem_limit", "1073741824"}, {"arena_extend_strategy", "kSameAsRequested"}}}.
  // An unknown key, a bad value, an option the provider does not honour yet, or options for a
  // provider not in execution_providers are Error(kInvalidArgument) naming them (docs/cuda.md).
  std::map<std::string, std::map<std::string, std::string>> provider_options;
  // Place the nodes on the providers without creating kernels; device providers need no device
  // then (what onyx explain does on a machine without one). Run is refused with an error.
  bool placement_only = false;
  // ONNX Runtime-style config entries. Known keys (others are an error):
  //   optimization.disable_specified_optimizers      comma-separated pass names to skip
  //   session.optimized_model_external_initializers_file_name   external data file for the
  //       saved optimized model (default: inline unless over 2 GB, then "<model>.data")
  //   session.optimized_model_external_initializers_min_size_in_bytes   (default 1024)
  //   session.intra_op.allow_spinning   "1" (default): idle intra-op workers spin briefly
  //       before sleeping; "0": they sleep at once
  //   session.inter_op.allow_spinning   the same for the inter-op threads of parallel mode
  //   session.intra_op_thread_affinities   processors for each intra-op worker, one entry per
  //       worker (intra_op_num_threads - 1), ';' between workers, ',' between processors,
  //       "a-b" for a range; logical processor ids count from 1: "1,2;3-4"
  //   session.dynamic_block_base   d > 0: ParallelFor hands out blocks that shrink as work is
  //       claimed, max(1, remaining / (threads * d)) items each; 0 (default): fixed blocks
  std::map<std::string, std::string> config_entries;

  // Memory (ONNX Runtime's enable_mem_pattern / enable_mem_reuse). Pattern: after a Run, the
  // arena keeps one block sized to that Run's peak for the same input shapes, so the next Run
  // with those shapes takes its intermediates from it without asking the system. Reuse: an
  // intermediate's buffer is released as soon as its last reader has run; without it, every
  // intermediate lives until the Run ends.
  bool enable_mem_pattern = true;
  bool enable_mem_reuse = true;

  // Profiling: each Run's nodes are recorded and EndProfiling() writes them, in ONNX Runtime's
  // Chrome-trace JSON format, to "<profile_file_prefix>_<timestamp>.json".
  bool enable_profiling = false;
  std::string profile_file_prefix = "onnxruntime_profile";

  // Logging, ONNX Runtime's severities: 0 verbose, 1 info, 2 warning, 3 error, 4 fatal. Messages
  // at or above log_severity_level go to stderr, prefixed with logid; verbose ones only up to
  // log_verbosity_level.
  int log_severity_level = 2;
  int log_verbosity_level = 0;
  std::string logid;

  // Same inputs, same outputs, bit for bit, whatever the thread timing (ONNX Runtime's
  // use_deterministic_compute). On CPU this holds with or without the option: every parallel
  // loop gives each output element (or each partial sum, combined in index order) to one block,
  // and block bounds follow from the item count and the thread count alone (dynamic_block_base
  // included), never from which thread is faster; the parallel executor changes only the order
  // of independent nodes. Results may differ between intra_op_num_threads values (a reduction
  // split in more chunks adds in another order), not between Runs with the same settings.
  bool use_deterministic_compute = false;

  // Symbolic input dims fixed before optimization (add_free_dimension_override_by_name); inputs()
  // then reports the size, and a feed of another size is an error. A symbol no input has, or a
  // negative size, is Error(kInvalidArgument) (ONNX Runtime ignores an unknown symbol).
  std::map<std::string, int64_t> free_dimension_overrides_by_name;
  // Initializers that replace the model's own of the same name (add_initializer). The session
  // keeps a reference to their bytes, not a copy. A name that is not an initializer of the model,
  // or a tensor of another dtype or shape, is Error(kInvalidArgument) (ONNX Runtime ignores an
  // unknown name and fails only at run time on a shape mismatch).
  std::vector<std::pair<std::string, Tensor>> initializers;
};

struct RunOptions {
  std::string run_tag;  // named in the errors of this run (ONNX Runtime's logid)
  // Return the arena's cached blocks to the system after this Run (ONNX Runtime's
  // memory.enable_memory_arena_shrinkage).
  bool shrink_arena_after_run = false;
  int log_severity_level = 2;
  int log_verbosity_level = 0;
  // Setting it (before or during the Run, from any thread) stops the Run before its next node
  // with Error(kFail) "terminated" (ONNX Runtime's RunOptions.terminate).
  std::shared_ptr<std::atomic<bool>> terminate = std::make_shared<std::atomic<bool>>(false);
};

// Name and static type of a model input or output.
struct IoInfo {
  std::string name;
  std::shared_ptr<const TypeInfo> type;
};

struct ModelMetadata {
  int64_t ir_version = 0;
  std::string producer_name;
  std::string producer_version;
  std::string domain;
  int64_t model_version = 0;
  std::string doc_string;
  std::string graph_name;
  std::map<std::string, int64_t> opset_imports;
  std::map<std::string, std::string> custom_metadata;
};

using NamedValues = std::vector<std::pair<std::string, Value>>;

class SessionImpl;

// Execution providers this build can run ("CPUExecutionProvider", and "CUDAExecutionProvider"
// where built with CUDA), by ONNX Runtime's names.
std::vector<std::string> AvailableProviders();
// Why a provider this build has cannot run on this machine ("" when it can; "CUDA" or
// "CUDAExecutionProvider"), e.g. "cudaGetDeviceCount returned 100 (no CUDA-capable device is
// detected)". Error(kInvalidArgument) for a provider this build lacks.
std::string ProviderUnavailableReason(const std::string& provider);
// Checks a provider's options as creating a session would (Error(kInvalidArgument) naming a bad
// key or value), without needing its device.
void CheckProviderOptions(const std::string& provider, const std::map<std::string, std::string>& options);

class Session {
 public:
  explicit Session(const std::string& model_path, const SessionOptions& options = {});
  Session(const void* model_bytes, size_t size, const SessionOptions& options = {});
  ~Session();
  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;

  // Inputs a caller must (or may) feed; initializers that double as inputs are listed in
  // overridable_initializers() instead.
  const std::vector<IoInfo>& inputs() const;
  const std::vector<IoInfo>& outputs() const;
  const std::vector<IoInfo>& overridable_initializers() const;
  const ModelMetadata& metadata() const;
  // Nodes created by graph fusions, by op type (ONNX Runtime's get_fused_operator_statistics).
  std::map<std::string, int> fused_operator_statistics() const;

  // Runs the model. `output_names` empty means all outputs, in model order. Thread-safe.
  std::vector<Value> Run(const NamedValues& feeds, const std::vector<std::string>& output_names = {},
                         const RunOptions& run_options = {}) const;
  // The same, writing output i into preallocated_outputs[i] in place where that tensor is
  // defined (IO binding); it must have the output's dtype and shape, else Error(kInvalidArgument).
  // The returned values then share the given buffers.
  std::vector<Value> Run(const NamedValues& feeds, const std::vector<std::string>& output_names,
                         const std::vector<Value>& preallocated_outputs, const RunOptions& run_options) const;

  // Providers in use, by priority ("CPUExecutionProvider" last).
  std::vector<std::string> providers() const;
  // Copies between the CPU and a device that each Run makes at the boundaries between nodes on
  // different providers (graph inputs read on a device and outputs made there included; nodes in
  // subgraphs add theirs per execution of the subgraph). 0 when every node runs on the CPU.
  int copies_per_run() const;
  // What session creation did with the creation cache (config entry
  // session.onyx_creation_cache_dir): "off", "hit", "miss" (the file was written), "rejected:
  // <why>" (a file was there but not trusted; it was rewritten) or "unwritable: <why>".
  std::string creation_cache_status() const;

  // Profiling (SessionOptions::enable_profiling): writes the events recorded so far and stops
  // recording; returns the file's path, or "" when profiling is off.
  std::string EndProfiling();
  // When profiling started (the session's creation), in ns since the epoch; 0 when off.
  int64_t profiling_start_time_ns() const;

  SessionImpl& impl() const { return *impl_; }

 private:
  std::unique_ptr<SessionImpl> impl_;
};

}  // namespace onyx
