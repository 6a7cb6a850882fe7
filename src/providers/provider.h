// The provider seam: an execution provider says which nodes it can run (and why not the
// others), creates their kernels, owns its allocator, and moves tensors to and from the CPU.
// The session and partitioner see providers only through this interface.
#pragma once

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

  // Whether a registered kernel runs this node, and why not.
  NodeClaim ClaimByRegistry(const ir::Node& node) const;
};

std::unique_ptr<ExecutionProvider> MakeCpuProvider();

}  // namespace onyx
