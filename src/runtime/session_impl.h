// What a Session is: the loaded model, its providers and thread pool, and the compiled plan.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "optimizer/pass_manager.h"
#include "onyx/session.h"
#include "platform/thread_pool.h"
#include "providers/provider.h"
#include "runtime/graph_plan.h"
#include "runtime/profiler.h"
#include "runtime/run_memory.h"
#include "runtime/thread_pools.h"
#include "tensor/arena_allocator.h"

namespace onyx {

// Where a session's model comes from, for the creation cache: a file path or the caller's bytes.
struct ModelSource {
  std::string path;  // empty: bytes
  const void* bytes = nullptr;
  size_t size = 0;
};

class SessionImpl {
 public:
  SessionImpl(std::shared_ptr<ir::Model> model, const SessionOptions& options);
  // Loads the model too. With the creation cache (config entry session.onyx_creation_cache_dir),
  // the optimized graph and packed weights come from the cache file when it holds this model,
  // build, CPU and options; else the model is loaded and optimized as usual and the file written.
  SessionImpl(const ModelSource& source, const SessionOptions& options);

  // preallocated (may be null): IO binding's buffers, one per requested output (see Session::Run).
  std::vector<Value> Run(const NamedValues& feeds, const std::vector<std::string>& output_names,
                         const RunOptions& run_options, const std::vector<Value>* preallocated = nullptr) const;

  const std::vector<IoInfo>& inputs() const { return inputs_; }
  const std::vector<IoInfo>& outputs() const { return outputs_; }
  const std::vector<IoInfo>& overridable_initializers() const { return overridable_; }
  const ModelMetadata& metadata() const { return metadata_; }
  const ir::Model& model() const { return *model_; }
  const GraphPlan& plan() const { return *plan_; }
  ThreadPool* thread_pool() const { return pool_.get(); }
  // Runs independent nodes in parallel execution mode; null in sequential mode.
  ThreadPool* inter_op_thread_pool() const { return inter_pool_.get(); }
  ArenaAllocator* arena() const { return arena_.get(); }
  // Outputs made in an input's buffer (in-place reuse) over all Runs so far (tests, benchmarks).
  int64_t in_place_outputs() const { return in_place_outputs_.load(std::memory_order_relaxed); }
  // By priority, CPU last.
  const std::vector<std::unique_ptr<ExecutionProvider>>& providers() const { return providers_; }
  const SessionOptions& options() const { return options_; }
  const OptimizationReport& optimization_report() const { return report_; }
  // "off", "hit", "miss" (written), "rejected: <why>" (rewritten) or "unwritable: <why>".
  const std::string& creation_cache_status() const { return cache_status_; }
  // Packed weights the kernels took from the cache file / packed during this creation.
  int creation_cache_packs_reused() const { return packs_reused_; }
  int creation_cache_packs_made() const { return packs_made_; }

  // Profiling (SessionOptions::enable_profiling): the session creator hands over the profiler
  // that timed loading and initialization; Runs record into it until EndProfiling().
  void SetProfiler(std::unique_ptr<Profiler> profiler);
  std::string EndProfiling() { return profiler_ ? profiler_->End() : ""; }
  int64_t profiling_start_time_ns() const { return profiler_ ? profiler_->start_time_ns() : 0; }

 private:
  std::string ModelLabel() const;
  // Providers, config checks, logger and thread pools: before the model is looked at.
  void Prepare();
  void Optimize();
  void SaveOptimizedModel();
  void CreateWithCache(const ModelSource& source);
  // Kernels (packing through `packs` when given) and the session's view of the graph.
  void BuildPlan(std::shared_ptr<PackedWeightStore> packs);
  // Checks a feed against the model's declared type; throws naming the input.
  void CheckFeed(const IoInfo& info, const Value& value) const;

  SessionOptions options_;
  std::shared_ptr<ir::Model> model_;
  std::vector<std::unique_ptr<ExecutionProvider>> providers_;
  std::shared_ptr<ThreadPool> pool_;        // the session's own, or the global one
  std::shared_ptr<ThreadPool> inter_pool_;  // parallel mode only
  std::shared_ptr<ArenaAllocator> arena_;  // null when the arena is off
  RunLimits run_limits_;                   // onyx.run.* config entries
  std::unique_ptr<GraphPlan> plan_;
  std::vector<IoInfo> inputs_, outputs_, overridable_;
  ModelMetadata metadata_;
  OptimizationReport report_;
  Logger logger_;  // SessionOptions' log levels and logid
  std::unique_ptr<Profiler> profiler_;  // null unless profiling
  std::string cache_status_ = "off";
  int packs_reused_ = 0, packs_made_ = 0;
  std::string model_label_;  // the model's path when it came from the creation cache
  mutable std::atomic<int64_t> in_place_outputs_{0};  // counted by Run, which is const
};

// Config entries SessionOptions accepts.
inline constexpr const char* kConfigDisableOptimizers = "optimization.disable_specified_optimizers";
inline constexpr const char* kConfigExternalInitializersFile = "session.optimized_model_external_initializers_file_name";
inline constexpr const char* kConfigExternalInitializersMinSize =
    "session.optimized_model_external_initializers_min_size_in_bytes";
// ONNX Runtime's switch to its u8 x u8 products where its u8 x s8 ones saturate int16 pair sums
// (x86 without VNNI). Onyx's int8 products are exact on every CPU, so "0" and "1" both give the
// exact results (the ones ORT gives with "1"); other values are errors.
inline constexpr const char* kConfigX64QuantPrecision = "session.x64quantprecision";

}  // namespace onyx
