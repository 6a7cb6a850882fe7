// Static type and shape inference. Each op family registers a rule (src/ops/infer/*.cc) that
// derives its outputs' types and shapes from its inputs' and attributes, using constant
// inputs where they are known (Reshape's shape, Slice's starts, ...). Unknown stays unknown:
// a rule may leave an output's shape absent, or a dim without value or symbol.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "onyx/value.h"

namespace onyx {

class InferenceContext {
 public:
  InferenceContext(const ir::Node& node, std::vector<std::shared_ptr<const TypeInfo>> inputs,
                   std::vector<const Tensor*> constants)
      : node_(node), inputs_(std::move(inputs)), constants_(std::move(constants)), outputs_(node.outputs.size()) {}

  const ir::Node& node() const { return node_; }
  int opset() const { return node_.opset; }
  size_t num_inputs() const { return inputs_.size(); }
  size_t num_outputs() const { return outputs_.size(); }
  bool has_input(size_t i) const { return i < node_.inputs.size() && !node_.inputs[i].empty(); }

  // Input i's type, or null when unknown/omitted.
  const TypeInfo* input(size_t i) const { return i < inputs_.size() ? inputs_[i].get() : nullptr; }
  DataType input_dtype(size_t i) const;
  // Input i's dims when its rank is known.
  const std::vector<Dim>* input_dims(size_t i) const;
  // Input i's value when it is a constant; null otherwise.
  const Tensor* constant(size_t i) const { return i < constants_.size() ? constants_[i] : nullptr; }
  // A constant integer tensor's values (int32/int64), when known.
  std::optional<std::vector<int64_t>> constant_ints(size_t i) const;

  // Input i's elements when it is a small 0-D/1-D integer tensor whose values are known at least
  // symbolically: a shape or pieces of one (Shape, Gather, Concat, ... of dims) or constants.
  // Null otherwise. InferNodeTypes fills them in (see PropagateShapeValues).
  const std::vector<Dim>* input_values(size_t i) const { return i < values_.size() ? values_[i] : nullptr; }
  void set_input_values(std::vector<const std::vector<Dim>*> values) { values_ = std::move(values); }

  int64_t attr_int(const std::string& name, int64_t fallback) const;
  std::vector<int64_t> attr_ints(const std::string& name) const;
  bool has_attr(const std::string& name) const { return node_.FindAttribute(name) != nullptr; }

  void set_output(size_t i, DataType dtype, std::optional<std::vector<Dim>> dims);
  void set_output_type(size_t i, std::shared_ptr<const TypeInfo> type) {
    if (i < outputs_.size()) outputs_[i] = std::move(type);
  }
  const std::vector<std::shared_ptr<const TypeInfo>>& outputs() const { return outputs_; }

 private:
  const ir::Node& node_;
  std::vector<std::shared_ptr<const TypeInfo>> inputs_;
  std::vector<const Tensor*> constants_;
  std::vector<std::shared_ptr<const TypeInfo>> outputs_;
  std::vector<const std::vector<Dim>*> values_;
};

using InferenceRule = std::function<void(InferenceContext&)>;

void RegisterInferenceRule(const std::string& domain, const std::string& op_type, InferenceRule rule);
const InferenceRule* FindInferenceRule(const std::string& domain, const std::string& op_type);
// Every (domain, op_type) with a rule, sorted (the shape-inference fuzz harness picks from them).
std::vector<std::pair<std::string, std::string>> RegisteredInferenceRules();

struct InferenceRuleRegistrar {
  InferenceRuleRegistrar(const char* domain, const char* op_type, InferenceRule rule) {
    RegisterInferenceRule(domain, op_type, std::move(rule));
  }
};
#define ONYX_INFER_CONCAT_INNER(a, b) a##b
#define ONYX_INFER_CONCAT(a, b) ONYX_INFER_CONCAT_INNER(a, b)
// ONYX_INFERENCE_RULE("", "Relu", SameAsInput0): a rule for an op.
#define ONYX_INFERENCE_RULE(domain, op, fn) \
  static ::onyx::InferenceRuleRegistrar ONYX_INFER_CONCAT(onyx_infer_rule_, __COUNTER__)(domain, op, fn)

// Types of the graph's values: graph inputs, initializers and declared value_info, plus every
// node output a rule can type. The graph is not changed (inferred types are not saved with
// the model). Subgraphs are not visited. Rules that throw on inconsistent input leave the value
// unknown; the kernel will report it at run time.
using TypeMap = std::map<std::string, std::shared_ptr<const TypeInfo>>;
TypeMap InferGraphTypes(const ir::Graph& graph);
// The same over `nodes`, which must be in topological order (a subset of graph.nodes).
TypeMap InferNodeTypes(const ir::Graph& graph, const std::vector<const ir::Node*>& nodes);
// A value's declared type (value_info) merged with the one its rule inferred, per dim: a number
// wins over a symbol or nothing (two different numbers: the declared one); of two different
// symbols the inferred one wins unless the declared one is a graph input's symbol (a fresh name
// such as float16 converters' unk__N says nothing the rules do not know); a declared type of
// another dtype, rank or kind wins whole.
std::shared_ptr<const TypeInfo> MergeDeclaredType(const std::shared_ptr<const TypeInfo>& declared,
                                                  const std::shared_ptr<const TypeInfo>& inferred,
                                                  const std::set<std::string>& input_symbols);

// The elements of a node's small integer outputs as dims (known numbers or symbols), computed
// from its inputs' values: Shape, Constant, Gather, Slice, Concat, Unsqueeze, Squeeze, Cast,
// Identity, integer Add/Sub/Mul/Div, Equal and Where. This is how a Reshape or Expand whose
// shape is computed from other values' dims (as exporters write them) gets symbolic dims.
// An entry is nullopt when unknown.
std::vector<std::optional<std::vector<Dim>>> PropagateShapeValues(const InferenceContext& ctx);
// Elements of shape values are dims, or negative numbers (Reshape's -1) written as a Dim whose
// param is "#<number>"; these never become dims of a tensor.
Dim ShapeValueLiteral(int64_t v);
// Input i's shape value: propagated, or from a small integer constant.
std::optional<std::vector<Dim>> InputShapeValues(const InferenceContext& ctx, size_t i);
std::optional<int64_t> ShapeValueNumber(const Dim& d);
// a * b, or nullopt when the product overflows int64: rules leave such a dim unknown (the
// kernel or the element-count limits then say what is wrong) instead of wrapping around.
inline std::optional<int64_t> MulDims(int64_t a, int64_t b) {
  int64_t p = 0;
  if (__builtin_mul_overflow(a, b, &p)) return std::nullopt;
  return p;
}

// Helpers shared by rules.
std::vector<Dim> KnownDims(const Shape& shape);
// numpy broadcast of dims; nullopt when some rank is unknown.
std::optional<std::vector<Dim>> BroadcastDims(const std::vector<const std::vector<Dim>*>& inputs);
void SameAsInput0(InferenceContext& ctx);
// Slice's starts, ends, axes and steps: attributes before opset 10, constant inputs after; an
// omitted optional input is an empty list, and a non-constant one nullopt (steps is nullopt
// before opset 10, which has none).
struct SliceArgs {
  std::optional<std::vector<int64_t>> starts, ends, axes, steps;
};
SliceArgs ReadSliceArgs(const InferenceContext& ctx);

}  // namespace onyx
