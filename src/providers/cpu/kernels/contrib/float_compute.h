// Runs a float kernel body on float16/bfloat16 inputs the way ONNX Runtime's CPU provider runs
// such nodes (it inserts Casts around float-only kernels): the inputs are widened to float, the
// body computes in float, and each float output is rounded once to the node's type.
#pragma once

#include <initializer_list>
#include <optional>
#include <vector>

#include "providers/kernel.h"

namespace onyx::contrib {

// Whether any tensor input of the node is float16 or bfloat16.
bool HasHalfInputs(const KernelContext& ctx);
// The element type the listed inputs (those present) share; fails the node when they differ.
DataType CommonInputType(const KernelContext& ctx, std::initializer_list<size_t> inputs);

class FloatComputeContext final : public KernelContext {
 public:
  // Widens every float16/bfloat16 tensor input; other inputs are the outer context's.
  explicit FloatComputeContext(KernelContext& outer);
  // Writes each float output the body allocated to the outer context as `dtype`.
  void Finish(DataType dtype);

  size_t num_inputs() const override { return outer_.num_inputs(); }
  size_t num_outputs() const override { return outer_.num_outputs(); }
  const Value* input_value(size_t i) const override;
  bool has_output(size_t i) const override { return outer_.has_output(i); }
  Tensor& AllocateOutput(size_t i, DataType dtype, const Shape& shape) override;
  void SetOutput(size_t i, Value value) override { outer_.SetOutput(i, std::move(value)); }
  std::vector<Value> RunSubgraph(const Subgraph& subgraph, std::vector<Value> inputs) override {
    return outer_.RunSubgraph(subgraph, std::move(inputs));
  }
  ThreadPool* thread_pool() const override { return outer_.thread_pool(); }
  Allocator* allocator() const override { return outer_.allocator(); }
  const ir::Node& node() const override { return outer_.node(); }

 private:
  KernelContext& outer_;
  std::vector<std::optional<Value>> widened_;
  std::vector<std::optional<Tensor>> float_outputs_;
};

}  // namespace onyx::contrib
