#include "platform/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/check.h"

namespace onyx {

std::shared_ptr<const MappedFile> MappedFile::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    // A path that names nothing is the caller's NoSuchFile (as ONNX Runtime reports it).
    if (err == ENOENT || err == ENOTDIR) ONYX_THROW(kNoSuchFile, "'", path, "' does not exist");
    ONYX_THROW(kInvalidModel, "cannot open '", path, "': ", std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    ONYX_THROW(kNoSuchFile, "'", path, "' is not a regular file");
  }
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->path_ = path;
  file->size_ = static_cast<size_t>(st.st_size);
  if (file->size_ > 0) {
    void* p = ::mmap(nullptr, file->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      ONYX_THROW(kInvalidModel, "cannot map '", path, "': ", std::strerror(err));
    }
    file->data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);
  return file;
}

void MappedFile::DropResidentPages() const {
  if (data_ != nullptr) ::madvise(const_cast<uint8_t*>(data_), size_, MADV_DONTNEED);
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
}

}  // namespace onyx
