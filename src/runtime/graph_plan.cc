#include "runtime/graph_plan.h"

#include <algorithm>
#include <atomic>
#include <optional>

#include "base/check.h"
#include "ops/shape_inference.h"

namespace onyx {

namespace {

constexpr char kPreallocated = 2;

std::shared_ptr<const TypeInfo> FindType(const ir::Graph* g, const std::string& name) {
  for (; g != nullptr; g = g->parent) {
    auto it = g->value_types.find(name);
    if (it != g->value_types.end()) return it->second;
    for (const auto& in : g->inputs)
      if (in.name == name && in.type) return in.type;
    for (const auto& out : g->outputs)
      if (out.name == name && out.type) return out.type;
    if (const Tensor* t = g->FindInitializer(name)) {
      std::vector<Dim> dims;
      for (int64_t d : t->shape()) dims.push_back(Dim{d, ""});
      return TypeInfo::Tensor(t->dtype(), dims);
    }
  }
  return nullptr;
}

// An initializer no feed can replace, in this graph or an enclosing one.
const Tensor* FindConstant(const ir::Graph* g, const std::string& name) {
  for (; g != nullptr; g = g->parent) {
    if (g->IsGraphInput(name)) return nullptr;
    if (const Tensor* t = g->FindInitializer(name)) return t;
    for (const auto& node : g->nodes)
      for (const auto& out : node->outputs)
        if (out == name) return nullptr;
  }
  return nullptr;
}

// Prefixes an error from kernel code with the node it is about (and, at run time, its inputs'
// types and shapes), unless it names the node already.
[[noreturn]] void RethrowWithNode(const Error& e, const ir::Node& node, const std::string& inputs = "") {
  const std::string what = e.what();
  if (what.find(node.Describe()) != std::string::npos) throw e;
  if (inputs.empty()) throw Error(e.code(), StrCat(node.Describe(), ": ", what));
  throw Error(e.code(), StrCat(node.Describe(), " with inputs (", inputs, "): ", what));
}

// Before each node: RunOptions::terminate, and the Run's verbose log.
void BeforeNode(const RunState& run, const ir::Node& node, const ExecutionProvider& provider) {
  if (run.terminate != nullptr && run.terminate->load(std::memory_order_relaxed))
    ONYX_THROW(kFail, "the run was terminated (RunOptions::terminate is set) before ", node.Describe());
  // Enabled first: Describe() builds a string, and building it for every node of every Run was
  // most of a small node's cost (45% of the instructions of a 100-node Add/Relu chain).
  if (run.logger != nullptr && run.logger->Enabled(LogSeverity::kVerbose, 1))
    run.logger->Verbose(1, "running ", node.Describe(), " on ", provider.name());
}

}  // namespace

class GraphPlan::StepContext final : public KernelContext {
 public:
  // written[slot]: 1 once the slot's value is produced; kPreallocated while it holds a Concat's
  // output that producers of its slices made ahead of the Concat (see concat_in_place.h).
  // concat_layout is null where values are not to be placed in Concats (parallel execution).
  // owned is null where outputs may not take over inputs' buffers (parallel execution).
  StepContext(const GraphPlan& plan, const Step& step, std::vector<Value>& slots, std::vector<char>& written,
              RunState& run, const ConcatLayout* concat_layout, OwnedBuffers* owned)
      : plan_(plan),
        step_(step),
        slots_(slots),
        written_(written),
        run_(run),
        concat_layout_(concat_layout),
        owned_(owned) {}

  size_t num_inputs() const override { return step_.inputs.size(); }
  size_t num_outputs() const override { return step_.outputs.size(); }
  const Value* input_value(size_t i) const override {
    if (i >= step_.inputs.size() || step_.inputs[i] < 0) return nullptr;
    return &slots_[step_.inputs[i]];
  }
  bool has_output(size_t i) const override { return i < step_.outputs.size() && step_.outputs[i] >= 0; }

  Tensor& AllocateOutput(size_t i, DataType dtype, const Shape& shape) override {
    const int s = i < step_.outputs.size() ? step_.outputs[i] : -1;
    const void* owner = nullptr;
    Tensor tensor = NewTensor(s, dtype, shape, i, &owner);
    Value& slot = OutputSlot(i);
    slot = Value(std::move(tensor));
    if (owned_ != nullptr && s >= 0) (*owned_)[s] = owner;
    return slot.tensor();
  }

  void SetOutput(size_t i, Value value) override {
    Value& slot = OutputSlot(i);
    slot = std::move(value);
    // A value sharing an input's buffer this Run made (Reshape, Squeeze, Identity...) may hand
    // it on later: the use count check at that time says whether anything else still holds it.
    const int s = i < step_.outputs.size() ? step_.outputs[i] : -1;
    if (owned_ == nullptr || s < 0) return;
    (*owned_)[s] = nullptr;
    if (!slot.is_tensor() || slot.tensor().holder() == nullptr) return;
    for (int in : step_.inputs)
      if (in >= 0 && (*owned_)[in] != nullptr && (*owned_)[in] == slot.tensor().holder().get()) (*owned_)[s] = (*owned_)[in];
  }

  std::vector<Value> RunSubgraph(const Subgraph& subgraph, std::vector<Value> inputs) override {
    const auto& plan = static_cast<const GraphPlan&>(subgraph);
    OuterLookup outer = [this](const std::string& name) -> const Value* {
      for (size_t k = 0; k < step_.implicit_names.size(); ++k)
        if (step_.implicit_names[k] == name) return &slots_[step_.implicit_slots[k]];
      return nullptr;
    };
    return plan.Execute(run_, std::move(inputs), outer);
  }

  ThreadPool* thread_pool() const override { return run_.pool; }
  Allocator* allocator() const override { return on_device() ? step_.provider->allocator() : run_.allocator; }
  const ir::Node& node() const override { return *step_.node; }

 private:
  // A tensor for slot s: the Concat output producers of its slices already made, a view into
  // the Concat output when s is a planned slice of one, else fresh memory.
  // *owner: set to the holder of a buffer made here for s (fresh or taken over), else left null.
  Tensor NewTensor(int s, DataType dtype, const Shape& shape, size_t output = 0, const void** owner = nullptr) {
    // A device's node makes its outputs in its device's memory (graph outputs are brought back
    // to the CPU when the graph ends).
    if (on_device()) return Tensor(dtype, shape, step_.provider->allocator());
    if (concat_layout_ != nullptr && s >= 0) {
      if (written_[s] == kPreallocated && InputsAsPlanned(s)) {
        const Tensor& made = slots_[s].tensor();
        if (made.dtype() == dtype && made.shape() == shape) return made;
      }
      const auto it = concat_layout_->slices.find(s);
      if (it != concat_layout_->slices.end() && it->second.dtype == dtype && it->second.shape == shape) {
        const ConcatSlice& slice = it->second;
        if (written_[slice.concat_slot] == 0) {
          slots_[slice.concat_slot] = Value(NewTensor(slice.concat_slot, dtype, slice.concat_shape, 0, nullptr));
          written_[slice.concat_slot] = kPreallocated;
        }
        if (written_[slice.concat_slot] == kPreallocated) {
          Tensor& whole = slots_[slice.concat_slot].tensor();
          // The slice must lie inside the Concat output as made: shapes the plan inferred can
          // differ from the ones a Run meets in a malformed model (a mutated stride wrote past it).
          const int64_t slice_bytes = StorageBytes(dtype, ShapeSize(shape));
          if (whole.holder() != nullptr && whole.shape() == slice.concat_shape &&
              slice.byte_offset >= 0 && slice.byte_offset + slice_bytes <= whole.byte_size())
            return Tensor::View(dtype, shape, static_cast<char*>(whole.raw_data()) + slice.byte_offset, whole.holder());
        }
      }
    }
    if (s >= 0 && &plan_ == run_.top_plan) {
      // A graph output: straight into the caller's buffer when it fits (no copy after the
      // Run), else outside any memory-pattern block.
      const Tensor* buffer = plan_.OutputBuffer(s, run_);
      if (buffer != nullptr && buffer->dtype() == dtype && buffer->shape() == shape) return *buffer;
      if (run_.output_allocator != nullptr && plan_.is_output_slot_[s]) return Tensor(dtype, shape, run_.output_allocator);
    }
    if (owned_ != nullptr && owner != nullptr && s >= 0) {
      if (const Tensor* donor = InPlaceDonor(output, dtype, shape)) {
        ++run_.in_place_outputs;
        *owner = donor->holder().get();
        return Tensor::View(dtype, shape, const_cast<void*>(donor->raw_data()), donor->holder());
      }
    }
    Tensor fresh(dtype, shape, run_.allocator);
    if (owner != nullptr) *owner = fresh.holder().get();
    return fresh;
  }

  // The input whose buffer output `output` may take over now: one the plan allowed, holding a
  // buffer this Run made that nothing else refers to (its slot holds the only reference), of the
  // output's dtype and shape (no broadcast operand); null when none.
  const Tensor* InPlaceDonor(size_t output, DataType dtype, const Shape& shape) const {
    if (output >= step_.in_place_donors.size() || dtype == DataType::kString) return nullptr;
    for (int in : step_.in_place_donors[output]) {
      const Value& v = slots_[in];
      if (!v.is_tensor()) continue;
      const Tensor& t = v.tensor();
      if (t.holder() == nullptr || t.holder().get() != (*owned_)[in] || t.holder().use_count() != 1) continue;
      if (t.dtype() != dtype || t.shape() != shape || t.device().type != DeviceType::kCpu) continue;
      return &t;
    }
    return nullptr;
  }

  // Whether this step (the Concat making `concat_slot`) got inputs of the shapes the layout
  // placed, so the slices written in place sit where the Concat puts them.
  bool InputsAsPlanned(int concat_slot) const {
    const auto it = concat_layout_->input_shapes.find(concat_slot);
    if (it == concat_layout_->input_shapes.end() || it->second.size() != step_.inputs.size()) return false;
    for (size_t i = 0; i < step_.inputs.size(); ++i) {
      const Value* v = input_value(i);
      if (v == nullptr || !v->is_tensor() || v->tensor().shape() != it->second[i]) return false;
    }
    return true;
  }

  bool on_device() const { return step_.provider->device().type != DeviceType::kCpu; }

  Value& OutputSlot(size_t i) {
    if (i >= step_.outputs.size()) Fail(StrCat("kernel wrote output ", i, " but the node has ", step_.outputs.size()));
    const int s = step_.outputs[i];
    if (s < 0) {
      scratch_.emplace_back();
      return scratch_.back();
    }
    written_[s] = 1;
    return slots_[s];
  }

  const GraphPlan& plan_;
  const Step& step_;
  std::vector<Value>& slots_;
  std::vector<char>& written_;
  RunState& run_;
  const ConcatLayout* concat_layout_;
  OwnedBuffers* owned_;
  std::vector<Value> scratch_;  // outputs nobody reads
};

const Tensor* GraphPlan::OutputBuffer(int s, const RunState& run) const {
  if (run.output_buffers == nullptr) return nullptr;
  for (size_t i = 0; i < output_slots_.size() && i < run.output_buffers->size(); ++i)
    if (output_slots_[i] == s && (*run.output_buffers)[i].defined()) return &(*run.output_buffers)[i];
  return nullptr;
}

int GraphPlan::SlotOf(const std::string& name) const {
  if (name.empty()) return -1;
  auto it = slot_of_name_.find(name);
  ONYX_CHECK(it != slot_of_name_.end(), kInvalidModel, "graph '", graph_.name, "': value '", name, "' is not defined");
  return it->second;
}

std::unique_ptr<GraphPlan> GraphPlan::Build(const ir::Graph& graph, const BuildContext& ctx) {
  std::unique_ptr<GraphPlan> plan(new GraphPlan(graph));
  plan->release_early_ = ctx.release_early;
  plan->in_place_reuse_ = ctx.in_place_reuse;
  auto add_slot = [&](const std::string& name) {
    auto [it, inserted] = plan->slot_of_name_.emplace(name, plan->num_slots_);
    if (inserted) ++plan->num_slots_;
    return it->second;
  };
  for (const auto& in : graph.inputs) {
    plan->input_names_.push_back(in.name);
    plan->input_slots_.push_back(add_slot(in.name));
  }
  for (const auto& [name, tensor] : graph.initializers) {
    const int slot = add_slot(name);
    if (!graph.IsGraphInput(name)) plan->constants_.emplace_back(slot, Value(tensor));
  }
  for (const auto& node : graph.nodes)
    for (const auto& out : node->outputs)
      if (!out.empty()) add_slot(out);
  for (const auto& name : graph.OuterScopeNames()) {
    plan->outer_names_.push_back(name);
    plan->outer_slots_.push_back(add_slot(name));
  }
  for (const auto& out : graph.outputs) {
    plan->output_names_.push_back(out.name);
    plan->output_slots_.push_back(plan->SlotOf(out.name));
  }

  plan->placements_ = PartitionGraph(graph, ctx.providers);
  plan->placement_only_ = ctx.placement_only;
  plan->slot_home_.assign(plan->num_slots_, nullptr);
  plan->constant_copy_source_.assign(plan->num_slots_, 0);
  // What each node's subgraphs read from this graph (computed once: it walks whole subgraphs).
  std::vector<std::vector<std::string>> implicit_names(graph.nodes.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i)
    for (const auto& attr : graph.nodes[i]->attributes) {
      std::vector<std::string> outer;
      if (attr.g) outer = attr.g->OuterScopeNames();
      for (const auto& sub : attr.graphs)
        for (auto& n : sub->OuterScopeNames()) outer.push_back(std::move(n));
      auto& names = implicit_names[i];
      for (auto& n : outer)
        if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(std::move(n));
    }
  // Subgraphs are built without release_initializer: their constants are not the top graph's.
  BuildContext subgraph_ctx = ctx;
  subgraph_ctx.release_initializer = nullptr;

  // Each constant goes as soon as its last reader has a kernel, if none reads it at run time:
  // weights copied at load (misaligned in the file) and packed by their kernels are then not
  // all held twice while the rest are packed (BERT-base's peak resident memory: 752 -> 525 MB).
  struct EarlyRelease {
    std::vector<int> unbuilt_readers;  // per slot: readers whose kernel is not made yet
    std::vector<char> keep;            // read at run time, by a kernel, a subgraph or the caller
    std::vector<int> constant_index;   // per slot: index in constants_, or -1
    std::vector<const std::string*> name;
  } early;
  if (ctx.release_initializer) {
    early.unbuilt_readers.assign(plan->num_slots_, 0);
    early.keep.assign(plan->num_slots_, 0);
    early.constant_index.assign(plan->num_slots_, -1);
    early.name.assign(plan->num_slots_, nullptr);
    for (size_t i = 0; i < plan->constants_.size(); ++i)
      early.constant_index[plan->constants_[i].first] = static_cast<int>(i);
    for (const auto& [name, slot] : plan->slot_of_name_) early.name[slot] = &name;
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      for (const auto& in : graph.nodes[i]->inputs)
        if (!in.empty()) ++early.unbuilt_readers[plan->SlotOf(in)];
      for (const auto& n : implicit_names[i])
        if (auto it = plan->slot_of_name_.find(n); it != plan->slot_of_name_.end()) early.keep[it->second] = 1;
    }
    for (const auto& out : graph.outputs) early.keep[plan->SlotOf(out.name)] = 1;
  }
  std::optional<TypeMap> inferred;
  GraphFacts graph_facts;
  for (size_t node_index = 0; node_index < graph.nodes.size(); ++node_index) {
    const ir::Node& node = *graph.nodes[node_index];
    const Placement& placement = plan->placements_[&node];
    ONYX_CHECK(placement.provider != nullptr, kNotImplemented, node.Describe(), ": no provider can run it: ",
               placement.Explain());
    Step step;
    step.node = &node;
    step.provider = placement.provider;
    for (const auto& in : node.inputs) step.inputs.push_back(plan->SlotOf(in));
    for (const auto& out : node.outputs) step.outputs.push_back(plan->SlotOf(out));
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const std::string& in = node.inputs[i];
      const Tensor* constant = in.empty() || graph.IsGraphInput(in) ? nullptr : graph.FindInitializer(in);
      if (constant == nullptr) continue;
      step.constant_inputs.resize(node.inputs.size());
      step.constant_inputs[i] = ProfiledTensor{constant->dtype(), constant->shape()};
    }
    step.implicit_names = std::move(implicit_names[node_index]);
    for (const auto& n : step.implicit_names) step.implicit_slots.push_back(plan->SlotOf(n));
    plan->PlaceInputs(step);
    if (ctx.placement_only) {
      // Placed, with its copies counted, but no kernel: the plan only answers questions.
      if (step.provider->device().type != DeviceType::kCpu)
        for (int slot : step.outputs)
          if (slot >= 0) plan->slot_home_[slot] = step.provider;
      plan->steps_.push_back(std::move(step));
      continue;
    }

    Step* step_ptr = &step;
    KernelInfo info(
        node, &graph, [&graph](const std::string& name) { return FindConstant(&graph, name); },
        [&node, step_ptr, &subgraph_ctx](const std::string& attr_name) -> const Subgraph* {
          const ir::Attribute* attr = node.FindAttribute(attr_name);
          if (attr == nullptr || !attr->g) return nullptr;
          auto& slot = step_ptr->subgraphs[attr_name];
          if (!slot) slot = Build(*attr->g, subgraph_ctx);
          return slot.get();
        },
        [&graph, &inferred](const std::string& name) -> std::shared_ptr<const TypeInfo> {
          if (auto declared = FindType(&graph, name)) return declared;
          // The optimized graph declares few of its values' types (its passes make new values):
          // inferred once, on the first kernel that asks for an undeclared one.
          if (!inferred) inferred = InferGraphTypes(graph);
          const auto it = inferred->find(name);
          return it != inferred->end() ? it->second : nullptr;
        },
        ctx.pool);
    info.set_packed_weight_store(ctx.packed_weights);
    info.set_graph_facts(&graph_facts);
    try {
      step.kernel = placement.provider->CreateKernel(info);
    } catch (const Error& e) {
      RethrowWithNode(e, node);
    }
    if (ctx.release_initializer)
      for (size_t i = 0; i < step.inputs.size(); ++i) {
        const int slot = step.inputs[i];
        if (slot < 0 || slot >= static_cast<int>(early.constant_index.size()) || early.constant_index[slot] < 0)
          continue;  // not a constant, or its copy on a device
        if (step.kernel->ReadsConstantInputAtRun(i)) early.keep[slot] = 1;
        if (--early.unbuilt_readers[slot] == 0 && !early.keep[slot]) {
          plan->constants_[static_cast<size_t>(early.constant_index[slot])].second = Value();
          ctx.release_initializer(*early.name[slot]);
        }
      }
    if (step.provider->device().type != DeviceType::kCpu)
      for (int slot : step.outputs)
        if (slot >= 0) plan->slot_home_[slot] = step.provider;
    plan->steps_.push_back(std::move(step));
    // Every so many kernels, let already-packed weights leave memory.
    if (ctx.release_mapped_pages && plan->steps_.size() % 32 == 0) ctx.release_mapped_pages();
  }
  if (ctx.placement_only) return plan;
  plan->DropConstantsNoKernelReads();
  plan->ComputeReleases();
  plan->ComputeStepGraph();
  plan->PlanConcatsInPlace();
  plan->PlanInPlaceOutputs();
  return plan;
}

void GraphPlan::PlaceInputs(Step& step) {
  const ExecutionProvider* device = step.provider->device().type == DeviceType::kCpu ? nullptr : step.provider;
  for (size_t i = 0; i < step.inputs.size(); ++i) {
    const int s = step.inputs[i];
    if (s < 0) continue;
    const ExecutionProvider* want = device != nullptr && !device->InputOnCpu(*step.node, i) ? device : nullptr;
    if (slot_home_[s] != want) step.inputs[i] = CopySlot(s, want, step);
  }
  // Subgraphs read the values of enclosing graphs on the CPU.
  for (int& s : step.implicit_slots)
    if (slot_home_[s] != nullptr) s = CopySlot(s, nullptr, step);
}

int GraphPlan::CopySlot(int src, const ExecutionProvider* want, Step& step) {
  const auto key = std::make_pair(src, want);
  if (auto it = copy_slots_.find(key); it != copy_slots_.end()) return it->second;
  const int dst = num_slots_++;
  slot_home_.push_back(want);
  constant_copy_source_.push_back(0);
  copy_slots_.emplace(key, dst);
  const StepCopy copy{src, dst, want != nullptr ? want : slot_home_[src]};
  const Value* constant = nullptr;
  for (const auto& [slot, value] : constants_)
    if (slot == src && value.is_tensor()) constant = &value;
  if (constant != nullptr && placement_only_) {
    constant_copy_source_[src] = 1;  // would go to the device once, when a plan with kernels is built
    return dst;
  }
  if (constant != nullptr) {
    // Constants go to the device once, now, rather than in every Run.
    Value copied;
    try {
      CopyValue(copy, *constant, copied, CpuAllocator());
    } catch (const Error& e) {
      RethrowWithNode(e, *step.node);
    }
    constants_.emplace_back(dst, std::move(copied));
    constant_copy_source_[src] = 1;
    return dst;
  }
  step.copies.push_back(copy);
  return dst;
}

void GraphPlan::CopyValue(const StepCopy& copy, const Value& src, Value& dst, Allocator* cpu_allocator) const {
  const ExecutionProvider* target = slot_home_[copy.dst];
  const Device device = target != nullptr ? target->device() : Device{};
  if (!src.is_tensor() || src.tensor().device() == device) {
    dst = src;  // already there (a value fed on the device), or not a tensor
    return;
  }
  const Tensor& from = src.tensor();
  Tensor to(from.dtype(), from.shape(), target != nullptr ? target->allocator() : cpu_allocator);
  copy.copier->CopyTensor(from, to);
  dst = Value(std::move(to));
}

int GraphPlan::copies_per_run() const {
  int n = 0;
  for (const Step& step : steps_) n += static_cast<int>(step.copies.size());
  for (int slot : output_slots_)
    if (slot < static_cast<int>(slot_home_.size()) && slot_home_[slot] != nullptr) ++n;
  return n;
}

void GraphPlan::PlanConcatsInPlace() {
  const bool has_concat = std::any_of(steps_.begin(), steps_.end(), [](const Step& step) {
    return step.node->op_type == "Concat" && step.node->domain.empty();
  });
  if (!has_concat) return;
  std::vector<ConcatPlanStep> steps;
  std::vector<char> pinned(is_output_slot_);
  for (const Step& step : steps_) {
    steps.push_back(ConcatPlanStep{step.node, step.provider->device().type == DeviceType::kCpu, step.inputs,
                                   step.outputs});
    for (int slot : step.implicit_slots) pinned[slot] = 1;
  }
  // The optimized graph declares few of its values' types: infer them, in terms of the graph
  // inputs' symbolic dims where those are not fixed.
  const TypeMap types = InferGraphTypes(graph_);
  concat_placements_ = PlanConcatPlacements(steps, pinned, [&](const std::string& name) {
    const auto it = types.find(name);
    return it != types.end() ? it->second : FindType(&graph_, name);
  });
  for (size_t i = 0; i < graph_.inputs.size(); ++i) {
    const auto& type = graph_.inputs[i].type;
    if (type == nullptr || !type->shape) continue;
    for (size_t d = 0; d < type->shape->size(); ++d)
      if (!(*type->shape)[d].known() && !(*type->shape)[d].param.empty())
        input_symbols_.emplace_back(i, d, (*type->shape)[d].param);
  }
}

ConcatLayout GraphPlan::LayOutConcats(const std::vector<Value>& slots) const {
  if (concat_placements_.empty()) return {};
  SymbolValues symbols;
  for (const auto& [input, dim, symbol] : input_symbols_) {
    const Value& v = slots[input_slots_[input]];
    if (v.is_tensor() && dim < v.tensor().rank()) symbols.emplace(symbol, v.tensor().dim(dim));
  }
  return PlaceConcatSlices(concat_placements_, symbols);
}

void GraphPlan::DropConstantsNoKernelReads() {
  std::vector<char> read(num_slots_, 0), consumed(num_slots_, 0);
  for (const Step& step : steps_) {
    for (size_t i = 0; i < step.inputs.size(); ++i) {
      const int slot = step.inputs[i];
      if (slot < 0) continue;
      consumed[slot] = 1;
      if (step.kernel->ReadsConstantInputAtRun(i)) read[slot] = 1;
    }
    for (int slot : step.implicit_slots) read[slot] = 1;
  }
  // A constant copied to a device at build is read from there.
  for (size_t slot = 0; slot < constant_copy_source_.size(); ++slot)
    if (constant_copy_source_[slot]) consumed[slot] = 1;
  for (int slot : output_slots_) read[slot] = 1;
  std::vector<std::pair<int, Value>> kept;
  std::vector<char> dropped(num_slots_, 0);
  for (auto& [slot, value] : constants_) {
    if (consumed[slot] && !read[slot]) {
      // Inputs of kernels that do not read them stay unbound; a step that still asks gets the
      // clear "input missing" error.
      dropped[slot] = 1;
      continue;
    }
    kept.emplace_back(slot, std::move(value));
  }
  constants_ = std::move(kept);
  // Their names in one pass (a pass per constant was quadratic: ~5% of a small model's cached
  // creation).
  for (const auto& [name, s] : slot_of_name_)
    if (s >= 0 && s < num_slots_ && dropped[s]) unread_initializers_.push_back(name);
}

void GraphPlan::ComputeReleases() {
  std::vector<int> last_reader(num_slots_, -1);
  for (size_t s = 0; s < steps_.size(); ++s) {
    for (const StepCopy& copy : steps_[s].copies) last_reader[copy.src] = static_cast<int>(s);
    for (int slot : steps_[s].inputs)
      if (slot >= 0) last_reader[slot] = static_cast<int>(s);
    for (int slot : steps_[s].implicit_slots) last_reader[slot] = static_cast<int>(s);
    // A value nobody reads dies right after it is made.
    for (int slot : steps_[s].outputs)
      if (slot >= 0 && last_reader[slot] < static_cast<int>(s)) last_reader[slot] = static_cast<int>(s);
  }
  for (int slot : output_slots_) last_reader[slot] = -1;  // outputs live until the end
  if (!release_early_) return;  // so does everything else without memory reuse
  for (int slot = 0; slot < num_slots_; ++slot)
    if (last_reader[slot] >= 0) steps_[last_reader[slot]].release_after.push_back(slot);
}

void GraphPlan::PlanInPlaceOutputs() {
  if (!release_early_ || !in_place_reuse_) return;  // without memory reuse every value keeps its own buffer
  std::vector<int> producer(num_slots_, -1), last_reader(num_slots_, -1);
  std::vector<char> pinned(is_output_slot_);  // read by a subgraph or copied to a device
  for (size_t s = 0; s < steps_.size(); ++s) {
    for (const StepCopy& copy : steps_[s].copies) pinned[copy.src] = pinned[copy.dst] = 1;
    for (int slot : steps_[s].implicit_slots) pinned[slot] = 1;
    for (int slot : steps_[s].inputs)
      if (slot >= 0) last_reader[slot] = static_cast<int>(s);
    for (int slot : steps_[s].outputs)
      if (slot >= 0) producer[slot] = static_cast<int>(s);
  }
  for (size_t s = 0; s < steps_.size(); ++s) {
    Step& step = steps_[s];
    if (step.provider->device().type != DeviceType::kCpu) continue;
    for (size_t j = 0; j < step.outputs.size(); ++j) {
      const uint32_t mask = step.kernel->InPlaceInputsFor(j);
      if (mask == 0 || step.outputs[j] < 0 || pinned[step.outputs[j]]) continue;
      std::vector<int> donors;
      for (size_t i = 0; i < step.inputs.size() && i < 32; ++i) {
        const int slot = step.inputs[i];
        if ((mask >> i & 1u) == 0 || slot < 0 || pinned[slot] || producer[slot] < 0 ||
            producer[slot] >= static_cast<int>(s) || last_reader[slot] != static_cast<int>(s) ||
            std::count(step.inputs.begin(), step.inputs.end(), slot) != 1)
          continue;
        donors.push_back(slot);
      }
      if (donors.empty()) continue;
      step.in_place_donors.resize(step.outputs.size());
      step.in_place_donors[j] = std::move(donors);
      has_in_place_ = true;
    }
  }
}

void GraphPlan::ComputeStepGraph() {
  std::vector<int> producer(num_slots_, -1);
  std::vector<std::vector<int>> predecessors(steps_.size());
  reads_of_slot_.assign(num_slots_, 0);
  is_output_slot_.assign(num_slots_, 0);
  for (int slot : output_slots_) is_output_slot_[slot] = 1;
  for (size_t s = 0; s < steps_.size(); ++s) {
    auto read = [&](int slot) {
      if (slot < 0) return;
      ++reads_of_slot_[slot];
      if (producer[slot] >= 0) predecessors[s].push_back(producer[slot]);
    };
    for (const StepCopy& copy : steps_[s].copies) read(copy.src);
    for (int slot : steps_[s].inputs) read(slot);
    for (int slot : steps_[s].implicit_slots) read(slot);
    for (const StepCopy& copy : steps_[s].copies) producer[copy.dst] = static_cast<int>(s);
    for (int slot : steps_[s].outputs)
      if (slot >= 0) producer[slot] = static_cast<int>(s);
  }
  step_graph_ = StepGraph::FromPredecessors(predecessors);
}

const Placement* GraphPlan::PlacementOf(const ir::Node* node) const {
  auto it = placements_.find(node);
  return it == placements_.end() ? nullptr : &it->second;
}

void GraphPlan::RunStep(const Step& step, std::vector<Value>& slots, std::vector<char>& written,
                        RunState& run, const ConcatLayout* concat_layout, OwnedBuffers* owned) const {
  for (const StepCopy& copy : step.copies) {
    const Profiler::NodeStart copy_start = run.profiler != nullptr ? run.profiler->StartNode() : Profiler::NodeStart{};
    try {
      CopyValue(copy, slots[copy.src], slots[copy.dst], run.allocator);
    } catch (const Error& e) {
      RethrowWithNode(e, *step.node);
    }
    written[copy.dst] = 1;
    if (run.profiler != nullptr && slots[copy.dst].is_tensor() && slots[copy.src].is_tensor() &&
        slots[copy.src].tensor().device() != slots[copy.dst].tensor().device()) {
      std::string value;  // the node's input the copy feeds
      for (size_t i = 0; i < step.inputs.size() && i < step.node->inputs.size(); ++i)
        if (step.inputs[i] == copy.dst) value = step.node->inputs[i];
      run.profiler->RecordCopy(copy_start, *step.node, value, slot_home_[copy.dst] != nullptr, copy.copier->name(),
                               slots[copy.dst].tensor());
    }
  }
  StepContext ctx(*this, step, slots, written, run, concat_layout, owned);
  const Profiler::NodeStart profile_start = run.profiler != nullptr ? run.profiler->StartNode() : Profiler::NodeStart{};
  try {
    step.kernel->Compute(ctx);
  } catch (const Error& e) {
    RethrowWithNode(e, *step.node, ctx.DescribeInputs());
  } catch (const std::bad_alloc&) {
    ONYX_THROW(kOutOfMemory, step.node->Describe(), ": out of memory");
  } catch (const std::exception& e) {
    ONYX_THROW(kRuntime, step.node->Describe(), " with inputs (", ctx.DescribeInputs(), "): ", e.what());
  }
  for (size_t i = 0; i < step.outputs.size(); ++i) {
    const int s = step.outputs[i];
    if (s >= 0 && written[s] != 1)
      ctx.Fail(StrCat("the kernel did not produce output ", i, " '", step.node->outputs[i], "'"));
  }
  if (run.profiler != nullptr)
    run.profiler->RecordNode(profile_start, *step.node, static_cast<int>(&step - steps_.data()), step.provider->name(),
                             step.inputs, step.outputs, slots, step.constant_inputs);
}

void GraphPlan::ExecuteParallel(RunState& run, std::vector<Value>& slots, std::vector<char>& written) const {
  // Readers left per slot; the step that takes it to zero releases the value, as the
  // sequential loop does after a value's last reader.
  std::vector<std::atomic<int>> readers_left(num_slots_);
  for (int slot = 0; slot < num_slots_; ++slot) readers_left[slot].store(reads_of_slot_[slot], std::memory_order_relaxed);
  auto release = [&](int slot) {
    if (release_early_ && !is_output_slot_[slot]) slots[slot] = Value();
  };
  RunStepGraph(run.inter_op_pool, step_graph_, [&](int index) {
    const Step& step = steps_[index];
    BeforeNode(run, *step.node, *step.provider);
    RunStep(step, slots, written, run, /*concat_layout=*/nullptr);
    for (int slot : step.outputs)
      if (slot >= 0 && reads_of_slot_[slot] == 0) release(slot);  // nobody reads it
    auto done_reading = [&](int slot) {
      if (slot >= 0 && readers_left[slot].fetch_sub(1, std::memory_order_acq_rel) == 1) release(slot);
    };
    for (const StepCopy& copy : step.copies) done_reading(copy.src);
    for (int slot : step.inputs) done_reading(slot);
    for (int slot : step.implicit_slots) done_reading(slot);
  });
}

std::vector<Value> GraphPlan::Execute(RunState& run, std::vector<Value> inputs, const OuterLookup& outer) const {
  ONYX_CHECK(!placement_only_, kFail, "graph '", graph_.name,
             "' was only placed on providers (a placement-only session, as onyx explain makes where a "
             "provider's device is missing): it has no kernels and cannot run");
  ONYX_CHECK(inputs.size() == input_slots_.size(), kInvalidArgument, "graph '", graph_.name, "' takes ",
             input_slots_.size(), " inputs, got ", inputs.size());
  std::vector<Value> slots(num_slots_);
  std::vector<char> written(num_slots_, 0);
  for (const auto& [slot, value] : constants_) {
    slots[slot] = value;
    written[slot] = 1;
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    slots[input_slots_[i]] = std::move(inputs[i]);
    written[input_slots_[i]] = 1;
  }
  for (size_t i = 0; i < outer_names_.size(); ++i) {
    const Value* v = outer ? outer(outer_names_[i]) : nullptr;
    ONYX_CHECK(v != nullptr, kInvalidModel, "graph '", graph_.name, "' reads '", outer_names_[i],
               "', which no enclosing graph defines");
    slots[outer_slots_[i]] = *v;
    written[outer_slots_[i]] = 1;
  }
  if (run.inter_op_pool != nullptr && graph_.parent == nullptr && step_graph_.width > 1) {
    ExecuteParallel(run, slots, written);
  } else {
    const ConcatLayout concat_layout = LayOutConcats(slots);
    const ConcatLayout* layout = concat_layout.slices.empty() ? nullptr : &concat_layout;
    OwnedBuffers owned(has_in_place_ ? num_slots_ : 0, nullptr);
    for (const Step& step : steps_) {
      BeforeNode(run, *step.node, *step.provider);
      RunStep(step, slots, written, run, layout, has_in_place_ ? &owned : nullptr);
      for (int slot : step.release_after) slots[slot] = Value();
    }
  }
  std::vector<Value> outputs;
  outputs.reserve(output_slots_.size());
  for (size_t i = 0; i < output_slots_.size(); ++i) {
    ONYX_CHECK(written[output_slots_[i]] == 1, kRuntime, "graph '", graph_.name, "': output '", output_names_[i],
               "' was not produced");
    const int slot = output_slots_[i];
    if (slot_home_[slot] == nullptr) {
      outputs.push_back(slots[slot]);
      continue;
    }
    // Made on a device: the graph's caller gets it on the CPU.
    Value host;
    const Value& made = slots[slot];
    if (made.is_tensor() && made.tensor().device().type != DeviceType::kCpu) {
      Tensor to(made.tensor().dtype(), made.tensor().shape(),
                run.output_allocator != nullptr && this == run.top_plan ? run.output_allocator : run.allocator);
      const Profiler::NodeStart copy_start = run.profiler != nullptr ? run.profiler->StartNode() : Profiler::NodeStart{};
      slot_home_[slot]->CopyTensor(made.tensor(), to);
      if (run.profiler != nullptr) {
        for (const Step& step : steps_)  // the copy is shown under the node that made the output
          if (std::find(step.outputs.begin(), step.outputs.end(), slot) != step.outputs.end())
            run.profiler->RecordCopy(copy_start, *step.node, output_names_[i], false, slot_home_[slot]->name(), to);
      }
      host = Value(std::move(to));
    } else {
      host = made;
    }
    outputs.push_back(std::move(host));
  }
  return outputs;
}

}  // namespace onyx
