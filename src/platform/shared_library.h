// Loading a shared library at run time. Device providers (CUDA) live in their own library next to
// libonyx and are loaded only when a session asks for them, so a CPU-only program never maps the
// device runtime (cuBLASLt alone adds ~0.3 s and ~150 MB to every process that links it).
#pragma once

#include <string>

namespace onyx {

// The folder holding the library or executable this code was linked into (libonyx.so).
std::string DirectoryOfThisLibrary();

// Loads `path` with its symbols resolved now; returns false and sets `*error` (the loader's message)
// when it cannot. A library stays loaded for the life of the process.
bool LoadSharedLibrary(const std::string& path, std::string* error);

}  // namespace onyx
