#include "base/aligned_memory.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <utility>

namespace onyx {
namespace {

constexpr size_t kSlabMinBytes = 4096;
constexpr size_t kSlabBytes = 4 * kHugePageBytes;

// `alignment`-aligned (2 MB or more) memory advised onto huge pages (its first `advised` bytes).
void* AllocateHuge(size_t bytes, size_t advised, size_t alignment = kHugePageBytes) {
  void* p = std::aligned_alloc(alignment, (bytes + alignment - 1) / alignment * alignment);
  // Advice only: where THP is off or unsupported the memory simply stays on small pages.
  if (p != nullptr && advised != 0) madvise(p, advised, MADV_HUGEPAGE);
  return p;
}

// Bump allocation out of 8 MB slabs. Slabs are found from a block's address by rounding it down
// to 8 MB; a block never starts at its slab's first byte (the slab keeps no header, the first
// block starts at kFirstOffset), which tells slab blocks from 2 MB-aligned large blocks.
class SlabHeap {
 public:
  void* Allocate(size_t bytes, size_t alignment) {
    std::lock_guard<std::mutex> lock(mutex_);
    size_t offset = (used_ + alignment - 1) / alignment * alignment;
    if (current_ == 0 || offset + bytes > kSlabBytes) {
      if (!StartSlab()) return nullptr;
      offset = (used_ + alignment - 1) / alignment * alignment;
    }
    used_ = offset + bytes;
    ++live_[current_];
    return reinterpret_cast<void*>(current_ + offset);
  }

  // False when p is not a slab block.
  bool Free(void* p) {
    const uintptr_t address = reinterpret_cast<uintptr_t>(p);
    const uintptr_t slab = address & ~(uintptr_t{kSlabBytes} - 1);
    if (slab == address) return false;
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = live_.find(slab);
    if (it == live_.end()) return false;
    if (--it->second == 0 && slab == current_) {
      used_ = kFirstOffset;  // the current slab is empty: start it over
    } else if (it->second == 0) {
      live_.erase(it);
      if (spare_ == 0) {
        spare_ = slab;
      } else {
        std::free(reinterpret_cast<void*>(slab));
      }
    }
    return true;
  }

 private:
  static constexpr size_t kFirstOffset = 64;

  bool StartSlab() {
    // The slab being left keeps its blocks; it is released by the free of its last one.
    if (current_ != 0 && live_[current_] == 0) {
      live_.erase(current_);
      std::free(reinterpret_cast<void*>(current_));
    }
    uintptr_t slab = std::exchange(spare_, 0);
    if (slab == 0) slab = reinterpret_cast<uintptr_t>(AllocateHuge(kSlabBytes, kSlabBytes, kSlabBytes));
    if (slab == 0) return false;
    current_ = slab;
    used_ = kFirstOffset;
    live_[current_] = 0;
    return true;
  }

  std::mutex mutex_;
  uintptr_t current_ = 0;  // the slab blocks are carved from, 0 before the first
  size_t used_ = 0;        // bytes of it handed out (and the offset of the next block)
  uintptr_t spare_ = 0;    // an empty slab kept for reuse
  std::unordered_map<uintptr_t, size_t> live_;  // slab -> blocks not yet freed
};

SlabHeap& Slabs() {
  static SlabHeap* heap = new SlabHeap;  // never destroyed: blocks may be freed at exit
  return *heap;
}

}  // namespace

void* AllocateAligned(size_t bytes, size_t alignment, bool share_huge_pages) {
  if (bytes >= kHugePageBytes) {
    // The partial last 2 MB page stays on small pages, so the rounding costs address space only.
    return AllocateHuge(bytes, bytes / kHugePageBytes * kHugePageBytes);
  }
  if (share_huge_pages && bytes >= kSlabMinBytes && alignment <= kSlabMinBytes) return Slabs().Allocate(bytes, alignment);
  // aligned_alloc wants a multiple of the alignment.
  const size_t rounded = bytes == 0 ? alignment : (bytes + alignment - 1) / alignment * alignment;
  return std::aligned_alloc(alignment, rounded);
}

void FreeAligned(void* p) {
  if (p == nullptr || Slabs().Free(p)) return;
  std::free(p);
}

}  // namespace onyx
