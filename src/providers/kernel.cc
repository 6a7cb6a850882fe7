#include "providers/kernel.h"

#include <algorithm>
#include <new>

#include "base/aligned_memory.h"

namespace onyx {

PackedWeightStore::Blob PackedWeightStore::Fresh(size_t bytes) {
  // As a pack without a store: AlignedFloats' memory (huge pages, small packs on shared slabs).
  void* p = AllocateAligned(bytes, 64, /*share_huge_pages=*/true);
  if (p == nullptr) throw std::bad_alloc();
  return {p, bytes, std::shared_ptr<void>(p, [](void* q) { FreeAligned(q); })};
}

void KernelInfo::Fail(const std::string& message) const { ONYX_THROW(kInvalidModel, Describe(), ": ", message); }

const ir::Attribute& KernelInfo::Require(const std::string& name, ir::AttrType type) const {
  const ir::Attribute* a = node_.FindAttribute(name);
  if (a == nullptr) Fail(StrCat("required attribute '", name, "' is missing"));
  if (a->type != type)
    Fail(StrCat("attribute '", name, "' is of type ", ir::AttrTypeName(a->type), ", expected ", ir::AttrTypeName(type)));
  return *a;
}

int64_t KernelInfo::GetInt(const std::string& name) const { return Require(name, ir::AttrType::kInt).i; }
int64_t KernelInfo::GetIntOr(const std::string& name, int64_t fallback) const {
  return HasAttr(name) ? GetInt(name) : fallback;
}
float KernelInfo::GetFloat(const std::string& name) const { return Require(name, ir::AttrType::kFloat).f; }
float KernelInfo::GetFloatOr(const std::string& name, float fallback) const {
  return HasAttr(name) ? GetFloat(name) : fallback;
}
std::string KernelInfo::GetString(const std::string& name) const { return Require(name, ir::AttrType::kString).s; }
std::string KernelInfo::GetStringOr(const std::string& name, const std::string& fallback) const {
  return HasAttr(name) ? GetString(name) : fallback;
}
std::vector<int64_t> KernelInfo::GetInts(const std::string& name) const { return Require(name, ir::AttrType::kInts).ints; }
std::vector<int64_t> KernelInfo::GetIntsOr(const std::string& name, std::vector<int64_t> fallback) const {
  return HasAttr(name) ? GetInts(name) : fallback;
}
std::vector<float> KernelInfo::GetFloats(const std::string& name) const {
  return Require(name, ir::AttrType::kFloats).floats;
}
std::vector<float> KernelInfo::GetFloatsOr(const std::string& name, std::vector<float> fallback) const {
  return HasAttr(name) ? GetFloats(name) : fallback;
}
std::vector<std::string> KernelInfo::GetStrings(const std::string& name) const {
  return Require(name, ir::AttrType::kStrings).strings;
}
std::vector<std::string> KernelInfo::GetStringsOr(const std::string& name, std::vector<std::string> fallback) const {
  return HasAttr(name) ? GetStrings(name) : fallback;
}
const Tensor& KernelInfo::GetTensor(const std::string& name) const { return Require(name, ir::AttrType::kTensor).t; }

const Tensor* KernelInfo::ConstantInput(size_t i) const {
  if (!has_input(i) || !constant_lookup_) return nullptr;
  return constant_lookup_(node_.inputs[i]);
}

std::string KernelInfo::PackKey(size_t i, const std::string& form) const {
  return StrCat(node_.name, "|", i < node_.inputs.size() ? node_.inputs[i] : std::string(), "|", form);
}

std::shared_ptr<const TypeInfo> KernelInfo::InputType(size_t i) const {
  if (!has_input(i) || !type_lookup_) return nullptr;
  return type_lookup_(node_.inputs[i]);
}

std::shared_ptr<const TypeInfo> KernelInfo::OutputType(size_t i) const {
  if (!has_output(i) || !type_lookup_) return nullptr;
  return type_lookup_(node_.outputs[i]);
}

const Subgraph& KernelInfo::GetSubgraph(const std::string& attr_name) const {
  const Subgraph* g = subgraph_lookup_ ? subgraph_lookup_(attr_name) : nullptr;
  if (g == nullptr) Fail(StrCat("graph attribute '", attr_name, "' is missing"));
  return *g;
}

const Tensor* KernelContext::input(size_t i) const {
  const Value* v = input_value(i);
  if (v == nullptr) return nullptr;
  if (!v->is_tensor()) Fail(StrCat("input ", i, " must be a tensor, got ", v->Describe()));
  return &v->tensor();
}

const Tensor& KernelContext::required_input(size_t i) const {
  const Tensor* t = input(i);
  if (t == nullptr) Fail(StrCat("required input ", i, " is missing"));
  return *t;
}

std::string KernelContext::DescribeInputs() const {
  std::vector<std::string> parts;
  for (size_t i = 0; i < num_inputs(); ++i) {
    const Value* v = input_value(i);
    parts.push_back(v ? v->Describe() : std::string("(none)"));
  }
  return StrJoin(parts);
}

void KernelContext::Fail(const std::string& message) const {
  ONYX_THROW(kRuntime, node().Describe(), " with inputs (", DescribeInputs(), "): ", message);
}

KernelRegistry& KernelRegistry::Global() {
  static KernelRegistry registry;
  return registry;
}

void KernelRegistry::Register(KernelDef def) {
  by_op_type_[def.op_type].push_back(defs_.size());
  defs_.push_back(std::move(def));
}

const KernelDef* KernelRegistry::Find(const std::string& provider, const std::string& domain, const std::string& op_type,
                                      int opset) const {
  const auto it = by_op_type_.find(op_type);
  if (it == by_op_type_.end()) return nullptr;
  for (size_t i : it->second) {
    const KernelDef& d = defs_[i];
    if (d.provider == provider && d.domain == domain && d.since <= opset && opset <= d.until) return &d;
  }
  return nullptr;
}

std::vector<const KernelDef*> KernelRegistry::FindAll(const std::string& provider, const std::string& domain,
                                                      const std::string& op_type) const {
  std::vector<const KernelDef*> result;
  const auto it = by_op_type_.find(op_type);
  if (it == by_op_type_.end()) return result;
  for (size_t i : it->second) {
    const KernelDef& d = defs_[i];
    if (d.provider == provider && d.domain == domain) result.push_back(&d);
  }
  std::sort(result.begin(), result.end(), [](auto* a, auto* b) { return a->since < b->since; });
  return result;
}

}  // namespace onyx
