// Session methods for ONNX Runtime's provider queries and IO binding's Run (the rest of the
// public face is in session_impl.cc).
#include <algorithm>

#include "runtime/session_impl.h"

namespace onyx {

std::vector<std::string> AvailableProviders() {
  std::vector<std::string> names;
  for (const auto& def : KernelRegistry::Global().all()) {
    const std::string name = OrtProviderName(def.provider);
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  // A provider in its own library counts before it is loaded (as ONNX Runtime's GPU package lists
  // CUDA on any machine); loading it waits for a session that asks for it.
  for (const char* module : {"CUDA"}) {
    const std::string name = OrtProviderName(module);
    if (ProviderModuleExists(module) && std::find(names.begin(), names.end(), name) == names.end())
      names.push_back(name);
  }
  // CPU is the fallback, last as in ONNX Runtime's list.
  std::stable_partition(names.begin(), names.end(), [](const std::string& n) { return n != "CPUExecutionProvider"; });
  if (names.empty()) names.push_back("CPUExecutionProvider");
  return names;
}

std::vector<std::string> Session::providers() const {
  std::vector<std::string> names;
  for (const auto& p : impl_->providers()) names.push_back(OrtProviderName(p->name()));
  return names;
}

std::vector<Value> Session::Run(const NamedValues& feeds, const std::vector<std::string>& output_names,
                                const std::vector<Value>& preallocated_outputs, const RunOptions& run_options) const {
  return impl_->Run(feeds, output_names, run_options, &preallocated_outputs);
}

}  // namespace onyx
