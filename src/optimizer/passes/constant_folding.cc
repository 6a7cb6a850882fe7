// Constant folding (basic): a node whose inputs are all constants is run once with the CPU
// kernels and replaced by initializers. Skipped: nodes with subgraphs, random ops, QDQ
// dequantization (kept for quantized fusions), results over the size limit that are larger
// than their inputs (folding must not bloat the model), and non-tensor results.
#include <algorithm>
#include <climits>
#include <new>
#include <set>

#include "optimizer/pass.h"
#include "providers/cpu/kernels/linalg/deferred_half_widening.h"
#include "providers/provider.h"
#include "tensor/small_page_allocator.h"

namespace onyx {
namespace {

const std::set<std::string> kNeverFold = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                                          "Multinomial",  "Bernoulli",     "DequantizeLinear", "QuantizeLinear"};

// Runs one kernel on constants. An output the fold would not keep (over `max_output_bytes`) is
// refused before it is allocated, so a constant ConstantOfShape/Expand of gigabytes costs nothing
// at session creation; the node stays and run time's limits apply to it.
class FoldingContext final : public KernelContext {
 public:
  FoldingContext(const ir::Node& node, std::vector<Value> inputs, int64_t max_output_bytes)
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
    if (StorageBytes(dtype, elements) > max_output_bytes_) Fail("output too large to fold");
    // Small pages: a folded weight (a Transpose of gpt2_small's 154 MB embedding for its head) is
    // mostly packed and dropped, and fresh huge pages are slow to fault in (base/aligned_memory.h).
    outputs_.at(i) = Value(Tensor(dtype, shape, CpuSmallPageAllocator()));
    return outputs_[i].tensor();
  }
  void SetOutput(size_t i, Value value) override { outputs_.at(i) = std::move(value); }
  std::vector<Value> RunSubgraph(const Subgraph&, std::vector<Value>) override {
    Fail("constant folding cannot run subgraphs");
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

class ConstantFolding final : public Pass {
 public:
  std::string name() const override { return "ConstantFolding"; }
  OptLevel level() const override { return OptLevel::kBasic; }

  int Apply(PassContext& ctx) override {
    GraphEditor& editor = ctx.editor;
    int folded = 0;
    for (ir::Node* node : editor.Nodes()) {
      if (node->HasSubgraphs() || kNeverFold.count(node->op_type)) continue;
      std::vector<Value> inputs;
      int64_t input_bytes = 0;
      bool all_constant = true;
      for (const auto& in : node->inputs) {
        if (in.empty()) {
          inputs.emplace_back();
          continue;
        }
        const Tensor* t = editor.Constant(in);
        if (t == nullptr) {
          all_constant = false;
          break;
        }
        input_bytes += t->byte_size();
        inputs.emplace_back(*t);
      }
      if (!all_constant) continue;
      for (const auto& v : inputs)
        if (v.is_tensor()) MaterializeDeferredWidening(v.tensor());  // a float16 weight's values
      auto results = Evaluate(*node, std::move(inputs), std::max(ctx.options.fold_size_limit_bytes, input_bytes));
      if (results.empty()) continue;
      bool fits = true;
      for (size_t i = 0; i < results.size(); ++i) {
        if (!node->outputs[i].empty() && !results[i].is_tensor()) fits = false;
        if (results[i].is_tensor() && results[i].tensor().byte_size() > ctx.options.fold_size_limit_bytes &&
            results[i].tensor().byte_size() > input_bytes)
          fits = false;
      }
      if (!fits) continue;
      const std::vector<std::string> outputs = node->outputs;
      editor.RemoveNode(node);
      for (size_t i = 0; i < outputs.size(); ++i) {
        if (outputs[i].empty()) continue;
        // Folded results own their bytes (kernels may have returned views of inputs).
        editor.graph().initializers[outputs[i]] = results[i].tensor();
      }
      ++ctx.counts["folded " + node->op_type];
      ++folded;
    }
    return folded;
  }

 private:
  // The node's outputs, or nothing when no CPU kernel runs it on these inputs.
  static std::vector<Value> Evaluate(const ir::Node& node, std::vector<Value> inputs, int64_t max_output_bytes) {
    static const auto cpu = MakeCpuProvider();
    if (!cpu->ClaimByRegistry(node).claimed) return {};
    try {
      KernelInfo info(node, nullptr, nullptr, nullptr, nullptr, nullptr);
      auto kernel = cpu->CreateKernel(info);
      FoldingContext fctx(node, std::move(inputs), max_output_bytes);
      kernel->Compute(fctx);
      return std::move(fctx.outputs());
    } catch (const Error&) {
      return {};  // leave it to run time, where the error will name the node and its inputs
    } catch (const std::bad_alloc&) {
      return {};  // a kernel's own scratch did not fit: the same
    }
  }
};

ONYX_REGISTER_PASS(ConstantFolding, 100);

}  // namespace
}  // namespace onyx
