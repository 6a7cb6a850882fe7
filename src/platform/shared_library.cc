#include "platform/shared_library.h"

#include <dlfcn.h>

namespace onyx {

std::string DirectoryOfThisLibrary() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&DirectoryOfThisLibrary), &info) == 0 || info.dli_fname == nullptr)
    return ".";
  const std::string file = info.dli_fname;
  const size_t slash = file.rfind('/');
  return slash == std::string::npos ? "." : file.substr(0, slash);
}

bool LoadSharedLibrary(const std::string& path, std::string* error) {
  // RTLD_LOCAL: the provider's own dependencies (cudart, cuBLASLt) stay out of the global namespace.
  if (dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL) != nullptr) return true;
  const char* message = dlerror();
  *error = message != nullptr ? message : "unknown error";
  return false;
}

}  // namespace onyx
