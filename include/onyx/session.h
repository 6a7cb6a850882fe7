// The session: load a model once, run it many times (from several threads at once if you
// like). Names follow ONNX Runtime's where they mean the same thing.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "onyx/error.h"
#include "onyx/value.h"

namespace onyx {

// ONNX Runtime's graph optimization levels.
enum class GraphOptimizationLevel { kDisabled = 0, kBasic = 1, kExtended = 2, kAll = 99 };

struct SessionOptions {
  GraphOptimizationLevel graph_optimization_level = GraphOptimizationLevel::kAll;
  // When set, the optimized graph is written here as an ONNX model.
  std::string optimized_model_filepath;
  // Threads for parallel loops inside one kernel; 0 = one per physical core (the thread
  // calling Run is one of them).
  int intra_op_num_threads = 0;
  // Reuse freed intermediate buffers across and within Runs (ONNX Runtime's enable_cpu_mem_arena).
  bool enable_cpu_mem_arena = true;
  // Most bytes the CPU arena may hold; 0 = no cap. Reaching it is an Error(kOutOfMemory) that
  // says so, not a crash.
  size_t cpu_arena_max_bytes = 0;
  // Execution providers by priority; CPU is always the fallback. Unknown names are an error.
  std::vector<std::string> execution_providers = {"CPU"};
  // ONNX Runtime-style config entries. Known keys (others are an error):
  //   optimization.disable_specified_optimizers      comma-separated pass names to skip
  //   session.optimized_model_external_initializers_file_name   external data file for the
  //       saved optimized model (default: inline unless over 2 GB, then "<model>.data")
  //   session.optimized_model_external_initializers_min_size_in_bytes   (default 1024)
  std::map<std::string, std::string> config_entries;
};

struct RunOptions {
  std::string run_tag;  // named in the errors of this run
  // Return the arena's cached blocks to the system after this Run (ONNX Runtime's
  // memory.enable_memory_arena_shrinkage).
  bool shrink_arena_after_run = false;
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

  SessionImpl& impl() const { return *impl_; }

 private:
  std::unique_ptr<SessionImpl> impl_;
};

}  // namespace onyx
