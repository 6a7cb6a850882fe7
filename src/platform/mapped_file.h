// Read-only memory map of a whole file. Model bytes and external weights are viewed in place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace onyx {

class MappedFile {
 public:
  // Throws Error naming the path: kNoSuchFile when it names no regular file, kInvalidModel when
  // it cannot be opened or mapped.
  static std::shared_ptr<const MappedFile> Open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }
  // Tells the kernel it may drop the pages read so far. Safe at any time: the mapping is
  // read-only and private, so a later access reads the page from the file again. Used after
  // session creation, when pre-packed weights have replaced most of the file's tensors.
  void DropResidentPages() const;

 private:
  MappedFile() = default;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
};

}  // namespace onyx
