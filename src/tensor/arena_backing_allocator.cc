// The memory under the arena. The arena hands blocks back when a memory-pattern Run ends, when an
// idle pattern is dropped and when it is trimmed, so its backing must give freed memory back to
// the system: blocks of 256 KiB and more are mapped and unmapped directly (from 2 MB up on 2 MB
// boundaries, advised onto transparent huge pages), smaller ones come from malloc. Measured on
// a BERT-like encoder fed 1,000 random shapes: with the huge-page slabs the arena used before
// (their space is not reused until a whole slab is free) resident memory grew by 100 MiB over 120
// Runs while the arena held 10 MiB; with malloc's heap for the large blocks too, by 44 MiB over
// 1,000 Runs (freed chunks in the middle of the heap stay resident); mapped directly it stays at
// the arena's size (docs/memory.md). A mapped block grows by remapping: its pages move, resident,
// to the larger mapping, so a memory-pattern block outgrown by a larger shape costs fresh pages
// only for the bytes it adds (fresh pages cost ~1.4 us each on this VM, faulting and unmapping).
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

// Maps `length` bytes (a multiple of the page) starting on an `align` boundary; null on failure.
void* MapAligned(size_t length, size_t align, size_t page) {
  const size_t mapped = length + align - page;  // room to slide to an `align` boundary
  void* raw = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t start = (begin + align - 1) / align * align;
  if (start > begin) munmap(raw, start - begin);
  if (begin + mapped > start + length) munmap(reinterpret_cast<void*>(start + length), begin + mapped - start - length);
  return reinterpret_cast<void*>(start);
}

// Asked once: the page size cannot change while the process runs.
size_t PageBytes() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

// Blocks of 2 MB and more start on a 2 MB boundary and are advised onto transparent huge pages
// (advice only: where THP is off they stay on small pages).
size_t AlignmentFor(size_t length, size_t page) { return length >= kHugePageBytes ? kHugePageBytes : page; }
void AdviseHuge(void* p, size_t length) {
  if (length >= kHugePageBytes) madvise(p, length / kHugePageBytes * kHugePageBytes, MADV_HUGEPAGE);
}

class ArenaBackingAllocator final : public GrowingAllocator {
 public:
  void* Allocate(size_t bytes) override {
    ONYX_CHECK(bytes <= static_cast<uint64_t>(MachineMemoryBytes()), kOutOfMemory, "CPU allocation of ", bytes,
               " bytes is more than this machine's memory (RAM + swap: ", MachineMemoryBytes(), " bytes)");
    if (bytes < kMapMinBytes) {
      void* p = AllocateAligned(bytes, kAlignment);
      ONYX_CHECK(p != nullptr, kOutOfMemory, "CPU allocation of ", bytes, " bytes failed");
      return p;
    }
    const size_t page = PageBytes();
    const size_t length = (bytes + page - 1) / page * page;
    void* p = MapAligned(length, AlignmentFor(length, page), page);
    ONYX_CHECK(p != nullptr, kOutOfMemory, "CPU allocation of ", bytes, " bytes failed (mmap)");
    AdviseHuge(p, length);
    std::lock_guard<std::mutex> lock(mutex_);
    mapped_[p] = length;
    return p;
  }

  void* Grow(void* p, size_t new_bytes) override {
    if (new_bytes > static_cast<uint64_t>(MachineMemoryBytes())) return nullptr;
    const size_t page = PageBytes();
    const size_t length = (new_bytes + page - 1) / page * page;
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = mapped_.find(p);
    if (it == mapped_.end()) return nullptr;  // from malloc: the caller allocates anew
    if (length <= it->second) return p;
    // Reserve the new place (aligned as a fresh block would be), then move the pages into it; the
    // kernel grows the mapping to the reserved length (zero pages on first touch past the old end).
    const size_t align = AlignmentFor(length, page);
    void* target = MapAligned(length, align, page);
    if (target == nullptr) return nullptr;
    void* moved = mremap(p, it->second, length, MREMAP_MAYMOVE | MREMAP_FIXED, target);
    if (moved == MAP_FAILED) {
      munmap(target, length);
      return nullptr;
    }
    AdviseHuge(moved, length);
    mapped_.erase(it);
    mapped_[moved] = length;
    return moved;
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
