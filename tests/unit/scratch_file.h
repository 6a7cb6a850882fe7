// A file in gtest's temporary directory holding given bytes, removed when the test is done with
// it: tests that write files for a reader to reject leave nothing behind in the shared /tmp.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace onyx {

class ScratchFile {
 public:
  // `name` is unique within the test binary; the process id keeps parallel runs apart.
  ScratchFile(const std::string& name, const std::string& bytes)
      : path_(::testing::TempDir() + name + "_" + std::to_string(getpid())) {
    std::ofstream(path_, std::ios::binary) << bytes;
  }
  ~ScratchFile() { std::remove(path_.c_str()); }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace onyx
