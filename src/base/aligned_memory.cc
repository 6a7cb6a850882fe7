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

constexpr size_t kPageBytes = 4096;

// Large small-page blocks are mappings of their own, unmapped when freed: from malloc they would
// mostly land in its heap, whose freed middle is never returned, so dropping the copies of packed
// weights would not lower the resident size (gpt2_small peak: +120 MB, measured).
class MappedBlocks {
 public:
  void* Allocate(size_t bytes) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    madvise(p, bytes, MADV_NOHUGEPAGE);  // THP in "always" mode would put them on huge pages
#ifdef MADV_POPULATE_WRITE
    // Their callers write all of them at once (copies, folds, widened halves): one call faults
    // the pages in far cheaper than a trap per 4 KB page (bert_base's copies: about -25%).
    // Advice only: kernels before 5.14 refuse it and the pages fault in as they are written.
    madvise(p, bytes, MADV_POPULATE_WRITE);
#endif
    std::lock_guard<std::mutex> lock(mutex_);
    sizes_[reinterpret_cast<uintptr_t>(p)] = bytes;
    return p;
  }

  bool Contains(const void* p) {
    std::lock_guard<std::mutex> lock(mutex_);
    return sizes_.count(reinterpret_cast<uintptr_t>(p)) != 0;
  }

  // False when p is not a mapped block.
  bool Free(void* p) {
    const auto address = reinterpret_cast<uintptr_t>(p);
    if (address % kPageBytes != 0) return false;  // mappings start on a page; most malloc blocks do not
    size_t bytes = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const auto it = sizes_.find(address);
      if (it == sizes_.end()) return false;
      bytes = it->second;
      sizes_.erase(it);
    }
    munmap(p, bytes);
    return true;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<uintptr_t, size_t> sizes_;
};

MappedBlocks& Mapped() {
  static MappedBlocks* blocks = new MappedBlocks;  // never destroyed: blocks may be freed at exit
  return *blocks;
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

void* AllocateAlignedSmallPages(size_t bytes, size_t alignment) {
  if (bytes >= kHugePageBytes && alignment <= kPageBytes) return Mapped().Allocate(bytes);
  const size_t rounded = bytes == 0 ? alignment : (bytes + alignment - 1) / alignment * alignment;
  return std::aligned_alloc(alignment, rounded);
}

bool IsOwnSmallPageMapping(const void* p) { return p != nullptr && Mapped().Contains(p); }

void FreeAligned(void* p) {
  if (p == nullptr || Slabs().Free(p) || Mapped().Free(p)) return;
  std::free(p);
}

}  // namespace onyx
