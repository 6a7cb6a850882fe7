// The memory under the arena. The arena hands blocks back when a memory-pattern Run ends, when an
// idle pattern is dropped and when it is trimmed, so its backing must give freed memory back to
// the system: blocks of 256 KiB and more are mapped and unmapped directly (from 2 MB up on 2 MB
// boundaries, advised onto transparent huge pages), smaller ones come from malloc. Measured on
// a BERT-like encoder fed 1,000 random shapes: with the huge-page slabs the arena used before
// (their space is not reused until a whole slab is free) resident memory grew by 100 MiB over 120
// Runs while the arena held 10 MiB; with malloc's heap for the large blocks too, by 44 MiB over
// 1,000 Runs (freed chunks in the middle of the heap stay resident); mapped directly it stays at
// the arena's size (docs/memory.md).
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "base/aligned_memory.h"
#include "base/check.h"
#include "tensor/arena_allocator.h"
#include "tensor/machine_memory.h"

namespace onyx {
namespace {

// AddressSanitizer neither checks nor scans for leaks memory mapped outside its allocator, so
// there every block comes from malloc.
#if defined(__SANITIZE_ADDRESS__)
constexpr size_t kMapMinBytes = SIZE_MAX;
#else
constexpr size_t kMapMinBytes = size_t{256} << 10;
#endif

class ArenaBackingAllocator final : public Allocator {
 public:
  void* Allocate(size_t bytes) override {
    ONYX_CHECK(bytes <= static_cast<uint64_t>(MachineMemoryBytes()), kOutOfMemory, "CPU allocation of ", bytes,
               " bytes is more than this machine's memory (RAM + swap: ", MachineMemoryBytes(), " bytes)");
    if (bytes < kMapMinBytes) {
      void* p = AllocateAligned(bytes, kAlignment);
      ONYX_CHECK(p != nullptr, kOutOfMemory, "CPU allocation of ", bytes, " bytes failed");
      return p;
    }
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t length = (bytes + page - 1) / page * page;
    const size_t align = bytes >= kHugePageBytes ? kHugePageBytes : page;
    const size_t mapped = length + align - page;  // room to slide to an `align` boundary
    void* raw = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ONYX_CHECK(raw != MAP_FAILED, kOutOfMemory, "CPU allocation of ", bytes, " bytes failed (mmap)");
    const uintptr_t begin = reinterpret_cast<uintptr_t>(raw);
    const uintptr_t start = (begin + align - 1) / align * align;
    if (start > begin) munmap(raw, start - begin);
    if (begin + mapped > start + length) munmap(reinterpret_cast<void*>(start + length), begin + mapped - start - length);
    void* p = reinterpret_cast<void*>(start);
    // Advice only: where THP is off the block stays on small pages.
    if (align == kHugePageBytes) madvise(p, length / kHugePageBytes * kHugePageBytes, MADV_HUGEPAGE);
    std::lock_guard<std::mutex> lock(mutex_);
    mapped_[p] = length;
    return p;
  }

  void Free(void* p) override {
    size_t length = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const auto it = mapped_.find(p);
      if (it != mapped_.end()) {
        length = it->second;
        mapped_.erase(it);
      }
    }
    if (length != 0) {
      munmap(p, length);
    } else {
      FreeAligned(p);
    }
  }

  Device device() const override { return Device{}; }

 private:
  std::mutex mutex_;
  std::unordered_map<void*, size_t> mapped_;  // mapped block -> its length
};

}  // namespace

Allocator* CpuArenaBackingAllocator() {
  static ArenaBackingAllocator* allocator = new ArenaBackingAllocator;  // never destroyed: arenas may outlive statics
  return allocator;
}

}  // namespace onyx
