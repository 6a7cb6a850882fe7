// Helpers shared by the vector-math tests: buffers that end at an inaccessible page (a read or
// write past the end crashes), ISA forcing, and ulp distances.
#pragma once

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "linalg/vector_math.h"

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

// Forces one ISA for the scope, restoring the default afterwards.
class VectorIsaGuard {
 public:
  explicit VectorIsaGuard(const std::string& isa) : ok_(ForceVectorIsa(isa)) {}
  ~VectorIsaGuard() { ForceVectorIsa("auto"); }
  bool ok() const { return ok_; }

 private:
  bool ok_;
};

// The spacing of floats at |v| (2^-149 for denormals and zero).
inline double UlpOf(double v) {
  v = std::fabs(v);
  if (v < static_cast<double>(std::numeric_limits<float>::min())) return std::ldexp(1.0, -149);
  int e;
  std::frexp(v, &e);  // v = f * 2^e, f in [0.5, 1)
  return std::ldexp(1.0, e - 24);
}

inline float BitsToFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

}  // namespace onyx::linalg::testing
