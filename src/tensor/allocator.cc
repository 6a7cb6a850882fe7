#include "onyx/allocator.h"

#include "base/aligned_memory.h"
#include "base/check.h"
#include "tensor/arena_allocator.h"

namespace onyx {

std::string Device::ToString() const {
  return type == DeviceType::kCpu ? "cpu" : StrCat("cuda:", id);
}

namespace {

class AlignedCpuAllocator final : public Allocator {
 public:
  explicit AlignedCpuAllocator(bool share_huge_pages) : share_huge_pages_(share_huge_pages) {}
  void* Allocate(size_t bytes) override {
    void* p = AllocateAligned(bytes, kAlignment, share_huge_pages_);
    ONYX_CHECK(p != nullptr, kOutOfMemory, "CPU allocation of ", bytes, " bytes failed");
    return p;
  }
  void Free(void* p) override { FreeAligned(p); }
  Device device() const override { return Device{}; }

 private:
  const bool share_huge_pages_;
};

}  // namespace

Allocator* CpuAllocator() {
  static AlignedCpuAllocator allocator(/*share_huge_pages=*/false);
  return &allocator;
}

Allocator* CpuArenaBackingAllocator() {
  static AlignedCpuAllocator allocator(/*share_huge_pages=*/true);
  return &allocator;
}

}  // namespace onyx
