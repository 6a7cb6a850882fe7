// Test buffers that end exactly at an inaccessible page, so a kernel that reads or writes past
// the end of its data faults instead of passing by luck.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <stdexcept>

namespace onyx::linalg::testing {

// `count` floats that end exactly where a PROT_NONE page begins (so the start is unaligned
// unless count is a multiple of 16).
class GuardedFloats {
 public:
  explicit GuardedFloats(size_t count) : count_(count) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t data_bytes = (count * sizeof(float) + page - 1) / page * page + page;
    size_ = data_bytes + page;
    base_ = static_cast<char*>(mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (base_ == MAP_FAILED) throw std::runtime_error("mmap failed");
    mprotect(base_ + data_bytes, page, PROT_NONE);
    data_ = reinterpret_cast<float*>(base_ + data_bytes) - count;
  }
  ~GuardedFloats() { munmap(base_, size_); }
  GuardedFloats(const GuardedFloats&) = delete;
  GuardedFloats& operator=(const GuardedFloats&) = delete;
  float* data() { return data_; }
  float& operator[](size_t i) { return data_[i]; }
  size_t size() const { return count_; }

 private:
  char* base_ = nullptr;
  size_t size_ = 0;
  float* data_ = nullptr;
  size_t count_ = 0;
};

}  // namespace onyx::linalg::testing
