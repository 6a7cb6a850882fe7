#include "ops/shape_inference.h"

#include <map>
#include <set>

#include "base/check.h"

namespace onyx {
namespace {

std::map<std::pair<std::string, std::string>, InferenceRule>& Rules() {
  static std::map<std::pair<std::string, std::string>, InferenceRule> rules;
  return rules;
}

std::shared_ptr<const TypeInfo> TypeOfInitializer(const Tensor& t) {
  return TypeInfo::Tensor(t.dtype(), KnownDims(t.shape()));
}

}  // namespace

DataType InferenceContext::input_dtype(size_t i) const {
  const TypeInfo* t = input(i);
  return t && t->kind == TypeInfo::Kind::kTensor ? t->elem_type : DataType::kUndefined;
}

const std::vector<Dim>* InferenceContext::input_dims(size_t i) const {
  const TypeInfo* t = input(i);
  return t && t->kind == TypeInfo::Kind::kTensor && t->shape ? &*t->shape : nullptr;
}

std::optional<std::vector<int64_t>> InferenceContext::constant_ints(size_t i) const {
  const Tensor* t = constant(i);
  if (t == nullptr) return std::nullopt;
  std::vector<int64_t> v(static_cast<size_t>(t->size()));
  if (t->dtype() == DataType::kInt64) {
    for (int64_t k = 0; k < t->size(); ++k) v[k] = t->data<int64_t>()[k];
  } else if (t->dtype() == DataType::kInt32) {
    for (int64_t k = 0; k < t->size(); ++k) v[k] = t->data<int32_t>()[k];
  } else {
    return std::nullopt;
  }
  return v;
}

int64_t InferenceContext::attr_int(const std::string& name, int64_t fallback) const {
  const ir::Attribute* a = node_.FindAttribute(name);
  return a && a->type == ir::AttrType::kInt ? a->i : fallback;
}

std::vector<int64_t> InferenceContext::attr_ints(const std::string& name) const {
  const ir::Attribute* a = node_.FindAttribute(name);
  return a && a->type == ir::AttrType::kInts ? a->ints : std::vector<int64_t>{};
}

void InferenceContext::set_output(size_t i, DataType dtype, std::optional<std::vector<Dim>> dims) {
  if (i < outputs_.size()) outputs_[i] = TypeInfo::Tensor(dtype, std::move(dims));
}

void RegisterInferenceRule(const std::string& domain, const std::string& op_type, InferenceRule rule) {
  Rules()[{domain, op_type}] = std::move(rule);
}

const InferenceRule* FindInferenceRule(const std::string& domain, const std::string& op_type) {
  auto it = Rules().find({domain, op_type});
  return it == Rules().end() ? nullptr : &it->second;
}

std::vector<std::pair<std::string, std::string>> RegisteredInferenceRules() {
  std::vector<std::pair<std::string, std::string>> ops;
  for (const auto& entry : Rules()) ops.push_back(entry.first);
  return ops;
}

std::vector<Dim> KnownDims(const Shape& shape) {
  std::vector<Dim> dims;
  for (int64_t d : shape) dims.push_back(Dim{d, ""});
  return dims;
}

std::optional<std::vector<Dim>> BroadcastDims(const std::vector<const std::vector<Dim>*>& inputs) {
  size_t rank = 0;
  for (const auto* in : inputs) {
    if (in == nullptr) return std::nullopt;
    rank = std::max(rank, in->size());
  }
  std::vector<Dim> out(rank, Dim{1, ""});
  for (size_t d = 0; d < rank; ++d) {
    std::optional<Dim> result;
    bool unknown = false;
    for (const auto* in : inputs) {
      const size_t offset = rank - in->size();
      if (d < offset) continue;
      const Dim& x = (*in)[d - offset];
      if (x.known() && x.value == 1) continue;
      if (!x.known() && x.param.empty()) {
        unknown = true;
        continue;
      }
      if (!result) {
        result = x;
      } else if (!(*result == x)) {
        // Two different non-1 sizes: known values conflict only at run time; a symbol wins
        // over nothing, a known size over a symbol.
        if (x.known()) result = x;
      }
    }
    if (result) out[d] = *result;
    else if (unknown) out[d] = Dim{};
  }
  return out;
}

SliceArgs ReadSliceArgs(const InferenceContext& ctx) {
  SliceArgs a;
  if (ctx.opset() < 10) {
    a.starts = ctx.attr_ints("starts");
    a.ends = ctx.attr_ints("ends");
    a.axes = ctx.attr_ints("axes");
  } else {
    a.starts = ctx.constant_ints(1);
    a.ends = ctx.constant_ints(2);
    a.axes = ctx.has_input(3) ? ctx.constant_ints(3) : std::vector<int64_t>{};
    a.steps = ctx.has_input(4) ? ctx.constant_ints(4) : std::vector<int64_t>{};
  }
  return a;
}

void SameAsInput0(InferenceContext& ctx) {
  const TypeInfo* t = ctx.input(0);
  if (t) ctx.set_output_type(0, std::make_shared<TypeInfo>(*t));
}

TypeMap InferGraphTypes(const ir::Graph& graph) {
  std::vector<const ir::Node*> nodes;
  for (const auto& n : graph.nodes) nodes.push_back(n.get());
  return InferNodeTypes(graph, nodes);
}

namespace {

// What to keep of a declared dim and an inferred one for the same axis.
Dim MergeDim(const Dim& declared, const Dim& inferred, const std::set<std::string>& input_symbols) {
  if (declared.known()) return declared;  // two different numbers: the declaration wins, as before
  if (inferred.known()) return inferred;  // a declared symbol stands for any number
  if (declared.param.empty()) return inferred;
  if (inferred.param.empty() || declared.param == inferred.param) return declared;
  // Two symbols. One that no graph input uses is a fresh name (converters write unk__N) that ties
  // this value to nothing the rules know; the inferred symbol ties it to the values it was
  // computed from, which is what fusions compare.
  return input_symbols.count(declared.param) ? declared : inferred;
}

std::set<std::string> InputSymbols(const ir::Graph& graph) {
  std::set<std::string> symbols;
  for (const auto& in : graph.inputs)
    if (in.type && in.type->kind == TypeInfo::Kind::kTensor && in.type->shape)
      for (const Dim& d : *in.type->shape)
        if (!d.known() && !d.param.empty()) symbols.insert(d.param);
  return symbols;
}

}  // namespace

std::shared_ptr<const TypeInfo> MergeDeclaredType(const std::shared_ptr<const TypeInfo>& declared,
                                                  const std::shared_ptr<const TypeInfo>& inferred,
                                                  const std::set<std::string>& input_symbols) {
  if (!declared) return inferred;
  if (!inferred || declared->kind != TypeInfo::Kind::kTensor || inferred->kind != TypeInfo::Kind::kTensor)
    return declared;
  if (declared->elem_type != DataType::kUndefined && declared->elem_type != inferred->elem_type) return declared;
  if (!declared->shape) return TypeInfo::Tensor(inferred->elem_type, inferred->shape);
  if (!inferred->shape || inferred->shape->size() != declared->shape->size())
    return TypeInfo::Tensor(inferred->elem_type, declared->shape);
  std::vector<Dim> dims;
  for (size_t i = 0; i < declared->shape->size(); ++i)
    dims.push_back(MergeDim((*declared->shape)[i], (*inferred->shape)[i], input_symbols));
  return TypeInfo::Tensor(inferred->elem_type, std::move(dims));
}

TypeMap InferNodeTypes(const ir::Graph& graph, const std::vector<const ir::Node*>& nodes) {
  TypeMap known;
  std::map<std::string, std::vector<Dim>> values;  // small integer tensors' elements
  for (const auto& [name, t] : graph.initializers) known[name] = TypeOfInitializer(t);
  for (const auto& in : graph.inputs)
    if (in.type) known[in.name] = in.type;
  for (const auto& [name, t] : graph.value_types) known.emplace(name, t);
  const std::set<std::string> input_symbols = InputSymbols(graph);
  for (const ir::Node* node : nodes) {
    const InferenceRule* rule = FindInferenceRule(node->domain, node->op_type);
    if (rule == nullptr) continue;
    std::vector<std::shared_ptr<const TypeInfo>> inputs;
    std::vector<const Tensor*> constants;
    for (const auto& in : node->inputs) {
      auto it = known.find(in);
      inputs.push_back(it == known.end() ? nullptr : it->second);
      const Tensor* c = graph.FindInitializer(in);
      constants.push_back(c && !graph.IsGraphInput(in) ? c : nullptr);
    }
    std::vector<const std::vector<Dim>*> input_values;
    for (const auto& in : node->inputs) {
      auto it = values.find(in);
      input_values.push_back(it == values.end() ? nullptr : &it->second);
    }
    InferenceContext ctx(*node, std::move(inputs), std::move(constants));
    ctx.set_input_values(std::move(input_values));
    // A rule that finds its inputs inconsistent (or too large to describe) leaves the outputs
    // unknown: the model may still be valid at run time, and if not the kernel says why.
    std::vector<std::optional<std::vector<Dim>>> out_values;
    try {
      (*rule)(ctx);
      out_values = PropagateShapeValues(ctx);
    } catch (const std::exception&) {
      continue;
    }
    for (size_t i = 0; i < out_values.size() && i < node->outputs.size(); ++i)
      if (out_values[i] && !node->outputs[i].empty()) values.emplace(node->outputs[i], std::move(*out_values[i]));
    for (size_t i = 0; i < node->outputs.size(); ++i) {
      const auto& out = ctx.outputs()[i];
      if (!out || node->outputs[i].empty()) continue;
      // A declared value_info is merged with the inferred type (MergeDeclaredType); graph
      // inputs and initializers keep their own types.
      auto [it, added] = known.emplace(node->outputs[i], out);
      if (!added && graph.value_types.count(node->outputs[i]) && !graph.IsGraphInput(node->outputs[i]) &&
          graph.initializers.count(node->outputs[i]) == 0)
        it->second = MergeDeclaredType(it->second, out, input_symbols);
    }
  }
  for (const auto& out : graph.outputs)
    if (out.type) known.emplace(out.name, out.type);  // declared outputs fill what rules left open
  return known;
}

}  // namespace onyx
