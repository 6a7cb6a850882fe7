// A caching arena over another allocator: freed blocks are kept by size and handed out again,
// so repeated Runs stop paying for fresh pages. Thread-safe (concurrent Runs share it). An
// optional cap bounds the bytes it holds from the backing allocator; reaching it first frees
// cached blocks, then fails with a clear Error(kOutOfMemory) instead of an OOM kill.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "onyx/allocator.h"

namespace onyx {

class ArenaAllocator final : public Allocator, public std::enable_shared_from_this<ArenaAllocator> {
 public:
  // max_bytes 0 means no cap.
  explicit ArenaAllocator(Allocator* backing, size_t max_bytes = 0);
  ~ArenaAllocator() override;

  void* Allocate(size_t bytes) override;
  void Free(void* p) override;
  Device device() const override { return backing_->device(); }
  // Tensors keep the arena alive, so outputs may outlive the session that made them. Create
  // arenas with std::make_shared.
  std::shared_ptr<void> KeepAlive() override { return shared_from_this(); }

  // Returns every cached (free) block to the backing allocator.
  void Trim();

  struct Stats {
    size_t in_use = 0;      // bytes handed out and not freed
    size_t reserved = 0;    // bytes held from the backing allocator (in use + cached)
    size_t peak_reserved = 0;
    size_t backing_allocations = 0;  // calls to the backing allocator so far
  };
  Stats stats() const;

 private:
  static size_t RoundUp(size_t bytes);
  void TrimLocked();

  Allocator* backing_;
  size_t max_bytes_;
  mutable std::mutex mutex_;
  std::multimap<size_t, void*> free_blocks_;  // size -> block
  std::unordered_map<void*, size_t> block_size_;  // every block we hold
  Stats stats_;
};

// The CPU allocator to back an arena with. An arena keeps its blocks for its whole life, so even
// small ones may share huge pages (AllocateAligned's share_huge_pages) without fragmenting them.
Allocator* CpuArenaBackingAllocator();

}  // namespace onyx
