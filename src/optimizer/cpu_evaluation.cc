#include "optimizer/cpu_evaluation.h"

#include <climits>
#include <new>

#include "providers/provider.h"
#include "tensor/small_page_allocator.h"

namespace onyx {
namespace {

// The kernel context of one evaluation. An output over `max_output_bytes` is refused before it
// is allocated, so a constant ConstantOfShape/Expand of gigabytes costs nothing at session
// creation; the node stays and run time's limits apply to it.
class EvaluationContext final : public KernelContext {
 public:
  EvaluationContext(const ir::Node& node, std::vector<Value> inputs, int64_t max_output_bytes)
      : node_(node), inputs_(std::move(inputs)), max_output_bytes_(max_output_bytes) {
    outputs_.resize(node.outputs.size());
  }
  size_t num_inputs() const override { return inputs_.size(); }
  size_t num_outputs() const override { return outputs_.size(); }
  const Value* input_value(size_t i) const override {
    return i < inputs_.size() && (node_.inputs[i].empty() == false) ? &inputs_[i] : nullptr;
  }
  bool has_output(size_t i) const override { return i < node_.outputs.size() && !node_.outputs[i].empty(); }
  Tensor& AllocateOutput(size_t i, DataType dtype, const Shape& shape) override {
    int64_t elements = 1;
    for (int64_t d : shape) elements = d > 0 && elements > INT64_MAX / d ? INT64_MAX : elements * d;
    if (StorageBytes(dtype, elements) > max_output_bytes_) Fail("output too large to evaluate while optimizing");
    // Small pages: a folded weight (a Transpose of gpt2_small's 154 MB embedding for its head) is
    // mostly packed and dropped, and fresh huge pages are slow to fault in (base/aligned_memory.h).
    outputs_.at(i) = Value(Tensor(dtype, shape, CpuSmallPageAllocator()));
    return outputs_[i].tensor();
  }
  void SetOutput(size_t i, Value value) override { outputs_.at(i) = std::move(value); }
  std::vector<Value> RunSubgraph(const Subgraph&, std::vector<Value>) override {
    Fail("cannot run subgraphs while optimizing");
  }
  ThreadPool* thread_pool() const override { return nullptr; }
  Allocator* allocator() const override { return CpuAllocator(); }
  const ir::Node& node() const override { return node_; }
  std::vector<Value>& outputs() { return outputs_; }

 private:
  const ir::Node& node_;
  std::vector<Value> inputs_;
  std::vector<Value> outputs_;
  int64_t max_output_bytes_;
};


}  // namespace

std::vector<Value> EvaluateOnCpu(const ir::Node& node, std::vector<Value> inputs, int64_t max_output_bytes,
                                 std::function<const Tensor*(const std::string&)> constants, const ir::Graph* graph) {
  static const auto cpu = MakeCpuProvider();
  if (!cpu->ClaimByRegistry(node).claimed) return {};
  try {
    KernelInfo info(node, graph, std::move(constants), nullptr, nullptr, nullptr);
    auto kernel = cpu->CreateKernel(info);
    EvaluationContext ectx(node, std::move(inputs), max_output_bytes);
    kernel->Compute(ectx);
    return std::move(ectx.outputs());
  } catch (const Error&) {
    return {};  // left to run time, where the error will name the node and its inputs
  } catch (const std::bad_alloc&) {
    return {};  // a kernel's own scratch did not fit: the same
  }
}

}  // namespace onyx
