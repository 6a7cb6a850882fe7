#include "providers/provider.h"

#include <unistd.h>

#include <cctype>
#include <cstring>
#include <mutex>
#include <set>

#include "platform/shared_library.h"

namespace onyx {

NodeClaim ExecutionProvider::ClaimByRegistry(const ir::Node& node) const {
  const auto& registry = KernelRegistry::Global();
  if (registry.Find(name(), node.domain, node.op_type, node.opset) != nullptr) return {true, ""};
  const std::string op = node.domain.empty() ? node.op_type : StrCat(node.domain, ".", node.op_type);
  if (node.opset <= 0)
    return {false, StrCat("the model does not import domain '", node.domain, "' that ", op, " belongs to")};
  auto all = registry.FindAll(name(), node.domain, node.op_type);
  if (all.empty()) return {false, StrCat("no ", name(), " kernel for op ", op)};
  std::vector<std::string> ranges;
  for (const auto* d : all)
    ranges.push_back(d->until >= kOpsetMax ? StrCat(d->since, "+") : StrCat(d->since, "-", d->until));
  return {false, StrCat("no ", name(), " kernel for ", op, " at opset ", node.opset, " (kernels exist for opsets ",
                        StrJoin(ranges), ")")};
}

std::vector<NodeClaim> ExecutionProvider::GetCapability(const ir::Graph& graph) const {
  std::vector<NodeClaim> claims;
  claims.reserve(graph.nodes.size());
  for (const auto& node : graph.nodes) claims.push_back(ClaimByRegistry(*node));
  return claims;
}

std::unique_ptr<OpKernel> ExecutionProvider::CreateKernel(const KernelInfo& info) const {
  const ir::Node& node = info.node();
  const KernelDef* def = KernelRegistry::Global().Find(name(), node.domain, node.op_type, node.opset);
  if (def == nullptr) info.Fail(ClaimByRegistry(node).reason);
  return def->factory(info);
}

void ExecutionProvider::CopyTensor(const Tensor& src, Tensor& dst) const {
  ONYX_CHECK(src.device().type == DeviceType::kCpu && dst.device().type == DeviceType::kCpu, kInvalidArgument,
             name(), " provider cannot copy from ", src.device().ToString(), " to ", dst.device().ToString());
  ONYX_CHECK(src.dtype() == dst.dtype() && src.size() == dst.size(), kInvalidArgument, "copy of ", src.Describe(),
             " into ", dst.Describe());
  if (src.dtype() == DataType::kString) {
    for (int64_t i = 0; i < src.size(); ++i) dst.data<std::string>()[i] = src.data<std::string>()[i];
  } else if (src.byte_size() > 0) {
    std::memcpy(dst.raw_data(), src.raw_data(), static_cast<size_t>(src.byte_size()));
  }
}

namespace {
std::map<std::string, ProviderFactory>& ProviderFactories() {
  static std::map<std::string, ProviderFactory> factories;
  return factories;
}
std::mutex& ProviderFactoriesMutex() {
  static std::mutex mutex;
  return mutex;
}
}  // namespace

void RegisterProviderFactory(const std::string& name, ProviderFactory factory) {
  std::lock_guard<std::mutex> lock(ProviderFactoriesMutex());
  ProviderFactories()[name] = std::move(factory);
}

namespace {
const ProviderFactory* FindRegisteredFactory(const std::string& name) {
  std::lock_guard<std::mutex> lock(ProviderFactoriesMutex());
  auto it = ProviderFactories().find(name);
  return it == ProviderFactories().end() ? nullptr : &it->second;
}

// Loads the provider's library once; its static registrars add the factory and kernels. The
// loader's own mutex, not the factories', is held: loading runs RegisterProviderFactory.
void LoadProviderModule(const std::string& name) {
  static std::mutex mutex;
  static std::map<std::string, std::string> failures;  // name -> why its library did not load
  static std::set<std::string> tried;
  std::lock_guard<std::mutex> lock(mutex);
  if (tried.insert(name).second && ProviderModuleExists(name)) {
    std::string error;
    if (!LoadSharedLibrary(ProviderModulePath(name), &error)) failures[name] = error;
  }
  auto failed = failures.find(name);
  ONYX_CHECK(failed == failures.end(), kFail, "the ", name, " execution provider's library ", ProviderModulePath(name),
             " is in this build of Onyx but cannot be loaded: ", failed->second);
}
}  // namespace

std::string ProviderModulePath(const std::string& name) {
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return StrCat(DirectoryOfThisLibrary(), "/libonyx_provider_", lower, ".so");
}

bool ProviderModuleExists(const std::string& name) { return access(ProviderModulePath(name).c_str(), F_OK) == 0; }

const ProviderFactory* FindProviderFactory(const std::string& name) {
  if (const ProviderFactory* factory = FindRegisteredFactory(name)) return factory;
  LoadProviderModule(name);
  return FindRegisteredFactory(name);
}

}  // namespace onyx
