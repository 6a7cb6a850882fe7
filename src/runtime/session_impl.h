// What a Session is: the loaded model, its providers and thread pool, and the compiled plan.
#pragma once

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

class SessionImpl {
 public:
  SessionImpl(std::shared_ptr<ir::Model> model, const SessionOptions& options);

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
  // By priority, CPU last.
  const std::vector<std::unique_ptr<ExecutionProvider>>& providers() const { return providers_; }
  const SessionOptions& options() const { return options_; }
  const OptimizationReport& optimization_report() const { return report_; }

  // Profiling (SessionOptions::enable_profiling): the session creator hands over the profiler
  // that timed loading and initialization; Runs record into it until EndProfiling().
  void SetProfiler(std::unique_ptr<Profiler> profiler);
  std::string EndProfiling() { return profiler_ ? profiler_->End() : ""; }
  int64_t profiling_start_time_ns() const { return profiler_ ? profiler_->start_time_ns() : 0; }

 private:
  std::string ModelLabel() const;
  void Optimize();
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
};

// Config entries SessionOptions accepts.
inline constexpr const char* kConfigDisableOptimizers = "optimization.disable_specified_optimizers";
inline constexpr const char* kConfigExternalInitializersFile = "session.optimized_model_external_initializers_file_name";
inline constexpr const char* kConfigExternalInitializersMinSize =
    "session.optimized_model_external_initializers_min_size_in_bytes";

}  // namespace onyx
