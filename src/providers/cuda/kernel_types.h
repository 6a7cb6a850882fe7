// Type constraints of a device provider's kernels, next to the kernel registry (which knows op,
// domain and opsets only): the dtypes each kernel computes in, and the inputs it reads on the
// host. Kernel files register them with their kernels; the capability and the runtime read them.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "onyx/dtype.h"

namespace onyx {
namespace ir {
class Node;
}

struct KernelTypes {
  std::vector<DataType> types;      // dtypes of input type_input the kernel computes in
  size_t type_input = 0;
  std::vector<size_t> host_inputs;  // inputs read from host memory (shapes, axes)
  // Other conditions (attributes): why the kernel cannot run the node, "" when it can.
  std::function<std::string(const ir::Node&)> check;
};

void RegisterKernelTypes(const std::string& provider, const std::string& domain, const std::string& op,
                         KernelTypes types);
// Null when none were registered.
const KernelTypes* FindKernelTypes(const std::string& provider, const std::string& domain, const std::string& op);

struct KernelTypesRegistrar {
  KernelTypesRegistrar(const std::string& provider, const std::string& domain, const std::string& op,
                       KernelTypes types) {
    RegisterKernelTypes(provider, domain, op, std::move(types));
  }
};

}  // namespace onyx
