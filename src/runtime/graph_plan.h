// A graph compiled for execution: each node placed on a provider with its kernel created,
// values numbered into slots, and the step after which each value is released. Plans are
// immutable once built, so concurrent Runs share them; each Run executes in its own frame.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "base/logging.h"
#include "providers/provider.h"
#include "runtime/concat_in_place.h"
#include "runtime/parallel_executor.h"
#include "runtime/partitioner.h"
#include "runtime/profiler.h"

namespace onyx {

class ThreadPool;
class GraphPlan;

// Per-Run state shared by a graph and its subgraphs.
struct RunState {
  ThreadPool* pool = nullptr;
  Allocator* allocator = nullptr;
  // Set in parallel execution mode: the top-level graph runs independent nodes at once on
  // this pool's threads. Subgraphs (If/Loop/Scan bodies) run sequentially on their caller.
  ThreadPool* inter_op_pool = nullptr;
  // Checked before each node, in subgraphs too: once set, the Run stops with Error(kFail).
  const std::atomic<bool>* terminate = nullptr;
  // The Run's logger (RunOptions' levels): at verbose, verbosity 1, each node as it starts.
  const Logger* logger = nullptr;
  // Outputs of top_plan's graph (subgraphs ignore these): output i is made in
  // (*output_buffers)[i] when that tensor is defined and the kernel asks for its dtype and shape
  // (IO binding); other outputs come from output_allocator when it is set (so a memory-pattern
  // block, reused by the next Run, never holds what the caller keeps).
  const GraphPlan* top_plan = nullptr;
  const std::vector<Tensor>* output_buffers = nullptr;
  Allocator* output_allocator = nullptr;
  // Set when the session profiles: every kernel run (subgraphs and parallel lanes too) is recorded.
  Profiler* profiler = nullptr;
  // Outputs that took over an input's buffer this Run (in-place reuse, subgraphs included).
  int64_t in_place_outputs = 0;
};

class GraphPlan final : public Subgraph {
 public:
  struct BuildContext {
    std::vector<const ExecutionProvider*> providers;  // by priority
    ThreadPool* pool = nullptr;
    // Called now and then while kernels are created, so memory-mapped weights already packed
    // can leave memory before the next ones are (keeps the creation peak down). May be null.
    std::function<void()> release_mapped_pages;
    // Called with each constant of the top-level graph once every node reading it has a kernel
    // and none of those reads it at run time (they packed or copied what they need), so the
    // owner can drop it then rather than after the whole plan is built. May be null.
    std::function<void(const std::string&)> release_initializer;
    // Release each intermediate after its last reader (SessionOptions::enable_mem_reuse);
    // false keeps them all until the Run ends.
    bool release_early = true;
    // Let elementwise outputs take over an intermediate input's buffer (with release_early only).
    bool in_place_reuse = true;
    // Only place the nodes (PlacementOf); no kernels are created and the plan cannot Execute.
    bool placement_only = false;
    // Where kernels take their packed weights from (the creation cache); null: fresh memory.
    std::shared_ptr<PackedWeightStore> packed_weights;
  };

  // Throws Error naming the node when a node has no kernel or its kernel rejects it.
  static std::unique_ptr<GraphPlan> Build(const ir::Graph& graph, const BuildContext& ctx);

  const std::vector<std::string>& input_names() const override { return input_names_; }
  const std::vector<std::string>& output_names() const override { return output_names_; }
  const ir::Graph& graph() const override { return graph_; }

  using OuterLookup = std::function<const Value*(const std::string&)>;
  // Runs with one value per graph input, in order; returns one value per graph output.
  std::vector<Value> Execute(RunState& run, std::vector<Value> inputs, const OuterLookup& outer) const;

  // Where each node runs and why (for `onyx info`).
  const Placement* PlacementOf(const ir::Node* node) const;
  // Initializers of this graph that no kernel reads at run time (every consumer pre-packed
  // them): the plan does not bind them, and the session may drop them from the graph.
  const std::vector<std::string>& unread_initializers() const { return unread_initializers_; }

  // Most nodes that can run at once in parallel mode (1 for a chain).
  int parallel_width() const { return step_graph_.width; }
  // Copies between the CPU and a provider's device each execution of this graph makes: values
  // crossing from a node on one device to a node on another, graph inputs read on a device and
  // outputs made on one (constants go to their device once, when the plan is built).
  int copies_per_run() const;

 private:
  // A value moved between devices just before a step runs: slot src (on one device) is copied
  // into slot dst (on the other) by the provider whose device is not the CPU.
  struct StepCopy {
    int src = -1;
    int dst = -1;
    const ExecutionProvider* copier = nullptr;
  };
  struct Step {
    const ir::Node* node = nullptr;
    const ExecutionProvider* provider = nullptr;
    std::unique_ptr<OpKernel> kernel;
    std::vector<int> inputs;   // slot per input, -1 when omitted
    std::vector<int> outputs;  // slot per output, -1 when omitted
    std::vector<std::string> implicit_names;  // outer-scope values its subgraphs read
    std::vector<int> implicit_slots;
    std::vector<int> release_after;  // slots whose last reader is this step
    std::map<std::string, std::unique_ptr<GraphPlan>> subgraphs;  // by attribute name
    // Per input, a constant's type and shape (dtype kUndefined for others; empty when none is
    // constant): the profile names them though a pre-packing kernel leaves their slots unbound.
    std::vector<ProfiledTensor> constant_inputs;
    std::vector<StepCopy> copies;  // made before the kernel runs
    // Per output (empty when none may): input slots whose buffer the output may take over, as
    // far as the plan can tell (an intermediate of this graph this step reads last, once, and
    // that no subgraph, copy or graph output needs); the Run checks the rest (InPlaceDonor).
    std::vector<std::vector<int>> in_place_donors;
  };
  // Per slot, during a sequential Run: the holder of the buffer this Run made for the slot (or
  // that the slot's value shares with such a buffer); null for fed, constant or other values.
  using OwnedBuffers = std::vector<const void*>;
  class StepContext;

  explicit GraphPlan(const ir::Graph& graph) : graph_(graph) {}
  // The caller's buffer for slot s (IO binding), or null.
  const Tensor* OutputBuffer(int s, const RunState& run) const;
  int SlotOf(const std::string& name) const;
  // Where slot s lives (null: the CPU); adds copies to the step for inputs on another device.
  void PlaceInputs(Step& step);
  int CopySlot(int src, const ExecutionProvider* want, Step& step);
  // Makes dst a copy of src on slot dst's device (sharing src when it is there already).
  void CopyValue(const StepCopy& copy, const Value& src, Value& dst, Allocator* cpu_allocator) const;
  void ComputeReleases();
  void DropConstantsNoKernelReads();
  void ComputeStepGraph();
  void PlanConcatsInPlace();
  void PlanInPlaceOutputs();
  // Computes one step and checks it wrote its outputs; errors name the node.
  // concat_layout (null: none) places outputs in Concats' outputs (sequential runs); owned
  // (null: none) lets outputs take over their inputs' buffers (sequential runs).
  void RunStep(const Step& step, std::vector<Value>& slots, std::vector<char>& written, RunState& run,
               const ConcatLayout* concat_layout, OwnedBuffers* owned = nullptr) const;
  ConcatLayout LayOutConcats(const std::vector<Value>& slots) const;
  // Runs the steps in dependency order on run.inter_op_pool, releasing each value after its
  // last reader finishes.
  void ExecuteParallel(RunState& run, std::vector<Value>& slots, std::vector<char>& written) const;

  const ir::Graph& graph_;
  bool release_early_ = true;
  bool in_place_reuse_ = true;
  bool placement_only_ = false;
  std::unordered_map<std::string, int> slot_of_name_;
  int num_slots_ = 0;
  std::vector<std::pair<int, Value>> constants_;
  std::vector<std::string> input_names_;
  std::vector<int> input_slots_;
  std::vector<std::string> output_names_;
  std::vector<int> output_slots_;
  std::vector<std::string> outer_names_;
  std::vector<int> outer_slots_;
  std::vector<Step> steps_;
  std::unordered_map<const ir::Node*, Placement> placements_;
  std::vector<std::string> unread_initializers_;
  StepGraph step_graph_;
  std::vector<int> reads_of_slot_;  // how many times steps read each slot (inputs and implicit)
  std::vector<char> is_output_slot_;
  // Concats whose inputs producers may write in place (sequential execution only).
  std::vector<ConcatPlacement> concat_placements_;
  bool has_in_place_ = false;  // some step has in_place_donors
  // Devices: per slot, the non-CPU provider whose device holds it (null: the CPU); copy slots by
  // (source slot, provider); outputs to bring back to the CPU at the end of each execution.
  std::vector<const ExecutionProvider*> slot_home_;
  std::map<std::pair<int, const ExecutionProvider*>, int> copy_slots_;
  std::vector<char> constant_copy_source_;  // per slot: a constant copied to a device at build
  // The graph inputs' symbolic dims: (input index, dim index, symbol), to bind them in each Run.
  std::vector<std::tuple<size_t, size_t, std::string>> input_symbols_;
};

}  // namespace onyx
