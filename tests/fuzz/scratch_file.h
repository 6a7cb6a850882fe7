// The readers the CLI uses for --input take a path, so the file harnesses write each input to a
// file in a private folder made once per process (under $TMPDIR) and read it back from there.
// External data a fuzzed TensorProto names is looked up in that same folder, which holds
// nothing but the input itself.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace onyx::fuzz {

inline const std::string& ScratchFolder() {
  static const std::string folder = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/onyx-fuzz-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("cannot make a scratch folder " + pattern);
    return pattern;
  }();
  return folder;
}

// Writes the bytes to ScratchFolder()/name and returns the file's path.
inline std::string WriteScratchFile(const std::string& name, const uint8_t* data, size_t size) {
  const std::string path = ScratchFolder() + "/" + name;
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) throw std::runtime_error("cannot write " + path);
  const size_t written = size == 0 ? 0 : std::fwrite(data, 1, size, f);
  std::fclose(f);
  if (written != size) throw std::runtime_error("short write to " + path);
  return path;
}

}  // namespace onyx::fuzz
