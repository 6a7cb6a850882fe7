// The readers the CLI uses for --input take a path, so the file harnesses write each input to a
// file in a private folder made once per process (under $TMPDIR) and read it back from there.
// External data a fuzzed TensorProto names is looked up in that same folder, which holds
// nothing but the input itself. The folder and what it holds are removed when the process exits,
// so replaying a corpus under ctest leaves nothing behind in the temp folder.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace onyx::fuzz {

// Owns the folder: made on first use, removed with its contents by the static destructor at exit.
class ScratchFolderOwner {
 public:
  ScratchFolderOwner() {
    const char* tmp = std::getenv("TMPDIR");
    path_ = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/onyx-fuzz-XXXXXX";
    if (mkdtemp(path_.data()) == nullptr) throw std::runtime_error("cannot make a scratch folder " + path_);
  }
  ~ScratchFolderOwner() {
    std::error_code ignored;  // nothing useful to do at exit if removal fails
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchFolderOwner(const ScratchFolderOwner&) = delete;
  ScratchFolderOwner& operator=(const ScratchFolderOwner&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline const std::string& ScratchFolder() {
  static const ScratchFolderOwner folder;
  return folder.path();
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
