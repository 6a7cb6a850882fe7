#include "onyx/allocator.h"

#include <cstdlib>
#include <new>

#include "base/check.h"

namespace onyx {

std::string Device::ToString() const {
  return type == DeviceType::kCpu ? "cpu" : StrCat("cuda:", id);
}

namespace {

class AlignedCpuAllocator final : public Allocator {
 public:
  void* Allocate(size_t bytes) override {
    // aligned_alloc needs a multiple of the alignment; 0 bytes still gets a unique pointer.
    const size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
    void* p = std::aligned_alloc(kAlignment, rounded == 0 ? kAlignment : rounded);
    ONYX_CHECK(p != nullptr, kOutOfMemory, "CPU allocation of ", bytes, " bytes failed");
    return p;
  }
  void Free(void* p) override { std::free(p); }
  Device device() const override { return Device{}; }
};

}  // namespace

Allocator* CpuAllocator() {
  static AlignedCpuAllocator allocator;
  return &allocator;
}

}  // namespace onyx
