#include "runtime/session_options_apply.h"

#include <set>

#include "base/check.h"

namespace onyx {

namespace {

// The type with every dim named `symbol` fixed to `size`; null when none is.
std::shared_ptr<const TypeInfo> FixDim(const std::shared_ptr<const TypeInfo>& type, const std::string& symbol,
                                       int64_t size) {
  if (type == nullptr || type->kind != TypeInfo::Kind::kTensor || !type->shape) return nullptr;
  auto fixed = std::make_shared<TypeInfo>(*type);
  bool changed = false;
  for (Dim& d : *fixed->shape)
    if (!d.known() && d.param == symbol) {
      d = Dim{size, ""};
      changed = true;
    }
  return changed ? fixed : nullptr;
}

void OverrideFreeDims(ir::Graph& graph, const std::map<std::string, int64_t>& overrides, const std::string& label) {
  for (const auto& [symbol, size] : overrides) {
    ONYX_CHECK(size >= 0, kInvalidArgument, label, ": free dimension override '", symbol, "' is ", size,
               ": a size must be 0 or more");
    bool found = false;
    for (auto& in : graph.inputs)
      if (auto fixed = FixDim(in.type, symbol, size)) {
        in.type = std::move(fixed);
        found = true;
      }
    if (!found) {
      std::set<std::string> symbols;
      for (const auto& in : graph.inputs)
        if (in.type && in.type->shape)
          for (const Dim& d : *in.type->shape)
            if (!d.known() && !d.param.empty()) symbols.insert(d.param);
      ONYX_THROW(kInvalidArgument, label, ": free dimension override '", symbol,
                 "' names no symbolic dim of the model's inputs (they have: ",
                 symbols.empty() ? std::string("none") : StrJoin(symbols), ")");
    }
    // Outputs declared with the same symbol have that size too.
    for (auto& out : graph.outputs)
      if (auto fixed = FixDim(out.type, symbol, size)) out.type = std::move(fixed);
  }
}

void ReplaceInitializers(ir::Graph& graph, const std::vector<std::pair<std::string, Tensor>>& replacements,
                         const std::string& label) {
  for (const auto& [name, tensor] : replacements) {
    const auto it = graph.initializers.find(name);
    ONYX_CHECK(it != graph.initializers.end(), kInvalidArgument, label, ": initializer '", name,
               "' given in SessionOptions::initializers is not an initializer of the model");
    ONYX_CHECK(tensor.defined() && tensor.device().type == DeviceType::kCpu, kInvalidArgument, label,
               ": initializer '", name, "' given in SessionOptions::initializers must be a CPU tensor, got ",
               tensor.defined() ? tensor.Describe() + " on " + tensor.device().ToString() : std::string("nothing"));
    ONYX_CHECK(tensor.dtype() == it->second.dtype() && tensor.shape() == it->second.shape(), kInvalidArgument, label,
               ": initializer '", name, "' is ", it->second.Describe(), " in the model, SessionOptions::initializers gives ",
               tensor.Describe());
    it->second = tensor;  // shares the caller's bytes (their holder keeps them alive)
  }
}

}  // namespace

void ApplyModelOptions(ir::Model& model, const SessionOptions& options, const std::string& model_label) {
  OverrideFreeDims(*model.graph, options.free_dimension_overrides_by_name, model_label);
  ReplaceInitializers(*model.graph, options.initializers, model_label);
}

}  // namespace onyx
