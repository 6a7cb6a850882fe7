#include "onyx/allocator.h"

#include "base/aligned_memory.h"
#include "base/check.h"
#include "tensor/machine_memory.h"
#include "tensor/small_page_allocator.h"

namespace onyx {

std::string Device::ToString() const {
  return type == DeviceType::kCpu ? "cpu" : StrCat("cuda:", id);
}

namespace {

class AlignedCpuAllocator final : public Allocator {
 public:
  explicit AlignedCpuAllocator(bool huge_pages) : huge_pages_(huge_pages) {}
  void* Allocate(size_t bytes) override {
    // More than RAM + swap can never be backed, though overcommit may grant it (then the OOM
    // killer strikes when the pages are touched) and AddressSanitizer aborts on such requests.
    ONYX_CHECK(bytes <= static_cast<uint64_t>(MachineMemoryBytes()), kOutOfMemory, "CPU allocation of ", bytes,
               " bytes is more than this machine's memory (RAM + swap: ", MachineMemoryBytes(), " bytes)");
    void* p = huge_pages_ ? AllocateAligned(bytes, kAlignment) : AllocateAlignedSmallPages(bytes, kAlignment);
    ONYX_CHECK(p != nullptr, kOutOfMemory, "CPU allocation of ", bytes, " bytes failed");
    return p;
  }
  void Free(void* p) override { FreeAligned(p); }
  Device device() const override { return Device{}; }

 private:
  const bool huge_pages_;
};

}  // namespace

Allocator* CpuAllocator() {
  static AlignedCpuAllocator allocator(/*huge_pages=*/true);
  return &allocator;
}

Allocator* CpuSmallPageAllocator() {
  static AlignedCpuAllocator allocator(/*huge_pages=*/false);
  return &allocator;
}

}  // namespace onyx
