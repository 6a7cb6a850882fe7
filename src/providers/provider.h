// The provider seam: an execution provider says which nodes it can run (and why not the
// others), creates their kernels, owns its allocator, and moves tensors to and from the CPU.
// The session and partitioner see providers only through this interface.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "providers/kernel.h"

namespace onyx {

// ONNX Runtime's name for a provider, as its APIs and profiles spell it: "CPU" -> "CPUExecutionProvider".
inline std::string OrtProviderName(const std::string& name) { return name + "ExecutionProvider"; }

struct NodeClaim {
  bool claimed = false;
  std::string reason;  // why not, when not claimed
};

class ExecutionProvider {
 public:
  virtual ~ExecutionProvider() = default;

  virtual const std::string& name() const = 0;  // "CPU", "CUDA"
  virtual Device device() const = 0;
  virtual Allocator* allocator() const = 0;

  // One claim per node of `graph`, in order. The default claims nodes with a registered kernel.
  virtual std::vector<NodeClaim> GetCapability(const ir::Graph& graph) const;
  // Creates the kernel of a claimed node. The default uses the kernel registry.
  virtual std::unique_ptr<OpKernel> CreateKernel(const KernelInfo& info) const;
  // Copies between devices; the default handles CPU to CPU.
  virtual void CopyTensor(const Tensor& src, Tensor& dst) const;
  // Whether the kernel of `node` reads input i from host memory though the provider's device is
  // another (shape and axes inputs): the runtime then leaves or copies that input on the CPU.
  virtual bool InputOnCpu(const ir::Node& node, size_t input) const { return false; }

  // Whether a registered kernel runs this node, and why not.
  NodeClaim ClaimByRegistry(const ir::Node& node) const;
};

std::unique_ptr<ExecutionProvider> MakeCpuProvider();

// Providers other than CPU register a factory under their short name ("CUDA") from their own
// files (a static ProviderRegistrar), so the session finds them without a central table and a
// build without them simply lacks the name. Options are ONNX Runtime's provider options (strings).
using ProviderOptions = std::map<std::string, std::string>;
struct ProviderFactory {
  // placement_only: the provider claims nodes as it would on its device but need not have one
  // (onyx explain on a machine without the device); it creates no kernels then.
  std::function<std::unique_ptr<ExecutionProvider>(const ProviderOptions& options, bool placement_only)> make;
  // Why the provider cannot run on this machine ("" when it can), e.g. no device.
  std::function<std::string()> unavailable_reason;
};
void RegisterProviderFactory(const std::string& name, ProviderFactory factory);
// Null when this build has no provider of that name. A provider built as its own library
// (ProviderModulePath) is loaded on the first call; a library that is there but cannot be loaded
// (its device runtime missing) is an error naming it.
const ProviderFactory* FindProviderFactory(const std::string& name);
// libonyx_provider_<name>.so beside libonyx, and whether this build installed it there.
std::string ProviderModulePath(const std::string& name);
bool ProviderModuleExists(const std::string& name);
struct ProviderRegistrar {
  ProviderRegistrar(const std::string& name, ProviderFactory factory) { RegisterProviderFactory(name, std::move(factory)); }
};

}  // namespace onyx
