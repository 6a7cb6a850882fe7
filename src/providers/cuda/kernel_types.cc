#include "providers/cuda/kernel_types.h"

#include <map>
#include <mutex>
#include <tuple>

namespace onyx {
namespace {
using Key = std::tuple<std::string, std::string, std::string>;
std::map<Key, KernelTypes>& Table() {
  static std::map<Key, KernelTypes> table;
  return table;
}
std::mutex& TableMutex() {
  static std::mutex mutex;
  return mutex;
}
}  // namespace

void RegisterKernelTypes(const std::string& provider, const std::string& domain, const std::string& op,
                         KernelTypes types) {
  std::lock_guard<std::mutex> lock(TableMutex());
  Table()[Key{provider, domain, op}] = std::move(types);
}

const KernelTypes* FindKernelTypes(const std::string& provider, const std::string& domain, const std::string& op) {
  std::lock_guard<std::mutex> lock(TableMutex());
  auto it = Table().find(Key{provider, domain, op});
  return it == Table().end() ? nullptr : &it->second;
}

}  // namespace onyx
