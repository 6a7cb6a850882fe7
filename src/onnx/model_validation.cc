#include "onnx/model_validation.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "base/check.h"
#include "base/config_value.h"

namespace onyx {
namespace {

struct Arity {
  const char* domain;
  const char* op;
  int since;
  int min_inputs, max_inputs, min_outputs, max_outputs;
};

constexpr Arity kArity[] = {
#include "onnx/op_arity_table.inc"
};

// The schema version a node of (domain, op) at `opset` uses: the newest since_version <= opset.
const Arity* FindArity(const std::string& domain, const std::string& op, int64_t opset) {
  static const auto* index = [] {
    auto* m = new std::unordered_map<std::string, std::vector<const Arity*>>();
    for (const Arity& a : kArity) (*m)[StrCat(a.domain, ":", a.op)].push_back(&a);
    return m;
  }();
  auto it = index->find(StrCat(domain, ":", op));
  if (it == index->end()) return nullptr;
  const Arity* best = nullptr;
  for (const Arity* a : it->second)
    if (a->since <= opset && (!best || a->since > best->since)) best = a;
  return best;
}

bool IsStandardDomain(const std::string& domain) { return domain == ir::kOnnxDomain || domain == ir::kMlDomain; }

std::string Range(int lo, int hi) {
  if (lo == hi) return std::to_string(lo);
  return hi == 2147483647 ? StrCat(lo, " or more") : StrCat(lo, " to ", hi);
}

void CheckType(const TypeInfo* t, const LoadLimits& limits, const std::string& what, int depth = 0) {
  if (t == nullptr || depth > 16) return;
  if (t->kind == TypeInfo::Kind::kTensor || t->kind == TypeInfo::Kind::kSparseTensor) {
    ONYX_CHECK(t->elem_type == DataType::kUndefined || IsValidDataType(static_cast<int32_t>(t->elem_type)),
               kInvalidModel, what, " has invalid element type ", static_cast<int32_t>(t->elem_type));
    if (!t->shape) return;
    const auto& dims = *t->shape;
    ONYX_CHECK(static_cast<int64_t>(dims.size()) <= limits.max_rank, kInvalidModel, what, " has rank ", dims.size(),
               ", more than the limit of ", limits.max_rank, " (session config onyx.loader.max_rank)");
    int64_t elements = 1;
    for (const Dim& d : dims) {
      if (!d.known()) continue;
      ONYX_CHECK(d.value <= limits.max_dim, kInvalidModel, what, " has dimension ", d.value,
                 ", more than the limit of ", limits.max_dim, " (session config onyx.loader.max_dim)");
      ONYX_CHECK(d.value == 0 || elements <= limits.max_elements / d.value, kInvalidModel, what,
                 " has more than ", limits.max_elements, " elements (session config onyx.loader.max_elements)");
      elements *= d.value;
    }
  }
  if (t->elem) CheckType(t->elem.get(), limits, what, depth + 1);
}

void CheckTensor(const Tensor& t, const LoadLimits& limits, const std::string& what) {
  ONYX_CHECK(t.rank() <= limits.max_rank, kInvalidModel, what, " has rank ", t.rank(), ", more than the limit of ",
             limits.max_rank, " (session config onyx.loader.max_rank)");
  for (int64_t d : t.shape())
    ONYX_CHECK(d <= limits.max_dim, kInvalidModel, what, " has dimension ", d, ", more than the limit of ",
               limits.max_dim, " (session config onyx.loader.max_dim)");
  ONYX_CHECK(t.size() <= limits.max_elements, kInvalidModel, what, " has ", t.size(), " elements, more than the limit of ",
             limits.max_elements, " (session config onyx.loader.max_elements)");
}

void ValidateGraph(const ir::Graph& graph, const LoadLimits& limits, const std::string& source) {
  const std::string where = StrCat(source, ": graph '", graph.name, "'");
  for (const auto& in : graph.inputs) CheckType(in.type.get(), limits, StrCat(where, ": input '", in.name, "'"));
  for (const auto& out : graph.outputs) {
    ONYX_CHECK(!out.name.empty(), kInvalidModel, where, " has an output with an empty name");
    CheckType(out.type.get(), limits, StrCat(where, ": output '", out.name, "'"));
  }
  for (const auto& [name, type] : graph.value_types) CheckType(type.get(), limits, StrCat(where, ": value '", name, "'"));
  for (const auto& [name, t] : graph.initializers) CheckTensor(t, limits, StrCat(where, ": initializer '", name, "'"));
  for (const auto& node : graph.nodes) {
    if (IsStandardDomain(node->domain)) {
      const Arity* a = FindArity(node->domain, node->op_type, node->opset);
      // Unknown ops are reported where a kernel is looked up (a model-local function may
      // also have been inlined away); known ones must have their schema's arity.
      if (a != nullptr) {
        const int n_in = static_cast<int>(node->inputs.size());
        const int n_out = static_cast<int>(node->outputs.size());
        ONYX_CHECK(n_in >= a->min_inputs && n_in <= a->max_inputs, kInvalidModel, where, ": ", node->Describe(),
                   " has ", n_in, " inputs; ", node->op_type, "-", a->since, " takes ", Range(a->min_inputs, a->max_inputs));
        ONYX_CHECK(n_out >= a->min_outputs && n_out <= a->max_outputs, kInvalidModel, where, ": ", node->Describe(),
                   " has ", n_out, " outputs; ", node->op_type, "-", a->since, " gives ",
                   Range(a->min_outputs, a->max_outputs));
      }
    }
    for (const auto& attr : node->attributes) {
      if (attr.t.defined()) CheckTensor(attr.t, limits, StrCat(where, ": attribute '", attr.name, "' of ", node->Describe()));
      if (attr.g) ValidateGraph(*attr.g, limits, source);
      for (const auto& sub : attr.graphs) ValidateGraph(*sub, limits, source);
    }
  }
}

}  // namespace

bool IsLoadLimitsConfigKey(const std::string& key) {
  return key == kConfigMaxRank || key == kConfigMaxDim || key == kConfigMaxElements;
}

LoadLimits LoadLimitsFromConfig(const std::map<std::string, std::string>& entries) {
  LoadLimits limits;
  for (auto [key, field] : {std::pair{kConfigMaxRank, &limits.max_rank}, std::pair{kConfigMaxDim, &limits.max_dim},
                            std::pair{kConfigMaxElements, &limits.max_elements}}) {
    auto it = entries.find(key);
    if (it == entries.end()) continue;
    *field = PositiveConfigInt(key, it->second);
  }
  return limits;
}

int64_t NewestKnownOpset(const std::string& domain) {
  int64_t newest = 0;
  if (IsStandardDomain(domain))
    for (const Arity& a : kArity)
      if (domain == a.domain) newest = std::max<int64_t>(newest, a.since);
  return newest;
}

void ValidateOpsetImports(const std::map<std::string, int64_t>& opsets, const std::string& source) {
  for (const auto& [domain, version] : opsets) {
    const std::string label = domain.empty() ? "ai.onnx" : domain;
    ONYX_CHECK(version >= 1 && version <= 2147483647, kInvalidModel, source, ": opset import of domain '", label,
               "' has version ", version);
    const int64_t newest = NewestKnownOpset(domain);
    ONYX_CHECK(newest == 0 || version <= newest, kInvalidModel, source, ": opset ", version, " of domain '", label,
               "' is newer than the newest Onyx knows (", newest, ")");
  }
}

void ValidateModel(const ir::Model& model, const LoadLimits& limits, const std::string& source) {
  ValidateGraph(*model.graph, limits, source);
}

}  // namespace onyx
