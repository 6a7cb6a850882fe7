// A caching arena over another allocator: freed blocks are kept by size and handed out again,
// so repeated Runs stop paying for fresh pages. Thread-safe (concurrent Runs share it). An
// optional cap bounds the bytes it holds from the backing allocator; reaching it first frees
// cached blocks, then fails with a clear Error(kOutOfMemory) instead of an OOM kill.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "onyx/allocator.h"

namespace onyx {

// A backing allocator that can make a block it gave larger, keeping the pages of it already
// faulted in (the CPU arena's backing remaps them). The arena grows memory-pattern blocks with it.
class GrowingAllocator : public Allocator {
 public:
  // The block's new address, at least new_bytes long with its old bytes unchanged; null when it
  // cannot grow this block (then p is untouched and still the caller's).
  virtual void* Grow(void* p, size_t new_bytes) = 0;
};

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

  // Returns every cached (free) block, memory-pattern blocks included, to the backing allocator.
  void Trim();

  // Memory patterns (SessionOptions::enable_mem_pattern): an allocator for one Run whose inputs
  // have the shapes `key` names. Its requests are placed first-fit in one address range; at the
  // end (when the Run and every tensor from it are gone) the arena keeps one block at least as
  // large as that range's high-water mark, for the key. The next Run with that key takes the block
  // (alone: a concurrent Run with the same key works as the first did) and, asking in the same
  // order, gets the same offsets inside it, so it goes neither to the arena's lists nor to the
  // system. A Run whose key has no block borrows the largest idle block of another key, which
  // then moves to its key if it was large enough. Blocks are made a quarter larger than the
  // high-water mark that asked for them (untouched pages cost no memory), so a Run at a slightly
  // larger shape still fits and faults in only the pages it adds; an outgrown block grows in place
  // where the backing allows it (GrowingAllocator), keeping its resident pages.
  // A request that does not fit (asked in another order, as in parallel mode) comes from the
  // arena, and the block kept afterwards grows to fit. Idle blocks are kept for at most
  // kMaxPatterns keys and kPatternBudget times the largest block a high-water mark asked for, in
  // bytes, so a model fed ever new shapes holds a bounded amount (docs/memory.md).
  std::shared_ptr<Allocator> BeginPatternRun(const std::string& key);

  struct Stats {
    size_t in_use = 0;      // bytes handed out and not freed
    size_t reserved = 0;    // bytes held from the backing allocator (in use + cached)
    size_t peak_reserved = 0;
    size_t backing_allocations = 0;  // calls to the backing allocator so far
    size_t allocations = 0;          // requests served by Allocate (from the cache or the backing)
    size_t pattern_blocks = 0;       // memory-pattern blocks held (kept for a key or in a Run)
    size_t idle_pattern_bytes = 0;   // bytes of the blocks kept for a key (no Run has them)
    size_t pattern_allocations = 0;  // requests placed inside a memory-pattern block
    size_t grown_pattern_blocks = 0;  // outgrown pattern blocks grown in place (resident pages kept)
    size_t grown_cached_blocks = 0;   // cached blocks grown in place for a larger request
  };
  // The size of a pattern block made for a Run whose high-water mark was `high_water`.
  static size_t PatternBlockBytes(size_t high_water) { return high_water + high_water / 4; }
  Stats stats() const;

 private:
  friend class PatternRun;
  struct PatternBlock {
    void* data = nullptr;
    size_t size = 0;
    uint64_t last_use = 0;  // pattern_clock_ when last kept (least recently used goes first)
  };
  static size_t RoundUp(size_t bytes);
  void TrimLocked();
  // Called when a pattern Run ends: keeps a block of at least high_water bytes for the key.
  // run_blocks: the blocks the arena served that Run.
  void EndPatternRun(const std::string& key, PatternBlock block, size_t high_water,
                     const std::unordered_set<void*>& run_blocks) noexcept;
  void FreePatternBlockLocked(PatternBlock block);
  void KeepPatternLocked(const std::string& key, PatternBlock block);
  // Drops the least recently used idle blocks past kMaxPatterns keys or kPatternBudget times the
  // largest high-water mark seen (docs/memory.md).
  void EvictPatternsLocked();
  // The largest idle pattern block, whatever its key (patterns_.end() when none is idle).
  std::map<std::string, PatternBlock>::iterator LargestIdlePatternLocked();

  Allocator* backing_;
  GrowingAllocator* growing_;  // backing_ when it can grow blocks, else null
  size_t max_bytes_;
  mutable std::mutex mutex_;
  std::multimap<size_t, void*> free_blocks_;  // size -> block
  std::unordered_map<void*, size_t> block_size_;  // every block we hold
  std::map<std::string, PatternBlock> patterns_;  // idle memory-pattern blocks by key
  size_t pattern_bytes_ = 0;       // their sizes' sum
  size_t largest_high_water_ = 0;  // the largest high-water mark a pattern Run reached
  uint64_t pattern_clock_ = 0;
  Stats stats_;
  std::atomic<size_t> pattern_allocations_{0};  // outside the mutex: pattern Runs do not take it
};

// The CPU allocator to back an arena with: it gives what the arena frees back to the system
// (large blocks are mapped directly; arena_backing_allocator.cc says why).
Allocator* CpuArenaBackingAllocator();

}  // namespace onyx
