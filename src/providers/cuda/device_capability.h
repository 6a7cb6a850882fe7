// What a device provider (CUDA) takes of a graph, as a pure function of the graph and the kernel
// registry, so it is computed the same with or without a device (onyx explain on a machine
// without a GPU). Every node declined gets its reason: no kernel for the op (or its opset), an
// input dtype the kernel lacks (naming the dtype and the ones it has), a node computing shapes
// (kept on the CPU, where the nodes reading the shape want it), an input dtype not known.
#pragma once

#include <vector>

#include "providers/provider.h"

namespace onyx {

std::vector<NodeClaim> DeviceCapability(const ir::Graph& graph, const ExecutionProvider& provider);

}  // namespace onyx
