#include "tensor/arena_allocator.h"

#include <algorithm>
#include <iterator>

#include "base/check.h"

namespace onyx {

namespace {

// Most input-shape keys whose pattern blocks the arena keeps (a model fed many shapes does not
// hoard one block per shape).
constexpr size_t kMaxPatterns = 16;
// Most bytes of idle pattern blocks, in multiples of the block the largest high-water mark a Run
// reached asks for: two of the largest shape's blocks, or more of smaller ones, so alternating
// between a few shapes keeps its patterns while random shapes cannot pile up 16 large blocks.
constexpr size_t kPatternBudget = 2;

}  // namespace

// One Run's allocator under a memory pattern. Offsets are handed out first-fit in a virtual
// range; those inside the block taken for the key are served from it, the rest by the arena.
// Thread-safe: a Run's nodes may allocate from several threads, and its outputs die anywhere.
class PatternRun final : public Allocator, public std::enable_shared_from_this<PatternRun> {
 public:
  PatternRun(std::shared_ptr<ArenaAllocator> arena, std::string key, ArenaAllocator::PatternBlock block)
      : arena_(std::move(arena)), key_(std::move(key)), block_(block) {}
  ~PatternRun() override { arena_->EndPatternRun(key_, block_, high_water_, arena_blocks_); }

  void* Allocate(size_t bytes) override {
    const size_t size = (std::max<size_t>(bytes, 1) + kAlignment - 1) / kAlignment * kAlignment;
    std::lock_guard<std::mutex> lock(mutex_);
    const size_t offset = Place(size);
    const bool in_block = block_.data != nullptr && offset + size <= block_.size;
    void* p = nullptr;
    if (in_block) {
      p = static_cast<char*>(block_.data) + offset;
      arena_->pattern_allocations_.fetch_add(1, std::memory_order_relaxed);
    } else {
      try {
        p = arena_->Allocate(bytes);
        arena_blocks_.insert(p);
      } catch (...) {
        Release(offset, size);
        throw;
      }
    }
    placed_[p] = Placed{offset, size, !in_block};
    return p;
  }

  void Free(void* p) override {
    if (p == nullptr) return;
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = placed_.find(p);
    ONYX_CHECK(it != placed_.end(), kRuntime, "memory pattern: freeing a block it does not own");
    Release(it->second.offset, it->second.size);
    if (it->second.from_arena) arena_->Free(p);
    placed_.erase(it);
  }

  Device device() const override { return arena_->device(); }
  std::shared_ptr<void> KeepAlive() override { return shared_from_this(); }

 private:
  struct Placed {
    size_t offset, size;
    bool from_arena;
  };

  // First fit among freed ranges, else at the end of the range in use.
  size_t Place(size_t size) {
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->second < size) continue;
      const size_t offset = it->first, left = it->second - size;
      free_.erase(it);
      if (left > 0) free_.emplace(offset + size, left);
      return offset;
    }
    const size_t offset = end_;
    end_ += size;
    high_water_ = std::max(high_water_, end_);
    return offset;
  }

  void Release(size_t offset, size_t size) {
    auto next = free_.lower_bound(offset);
    if (next != free_.end() && next->first == offset + size) {
      size += next->second;
      next = free_.erase(next);
    }
    if (next != free_.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == offset) {
        offset = prev->first;
        size += prev->second;
        free_.erase(prev);
      }
    }
    if (offset + size == end_) {
      end_ = offset;  // the free tail is implicit
    } else {
      free_.emplace(offset, size);
    }
  }

  std::shared_ptr<ArenaAllocator> arena_;
  const std::string key_;
  const ArenaAllocator::PatternBlock block_;
  std::mutex mutex_;
  std::map<size_t, size_t> free_;  // offset -> size, below end_
  size_t end_ = 0, high_water_ = 0;
  std::unordered_map<void*, Placed> placed_;
  std::unordered_set<void*> arena_blocks_;  // blocks the arena served this Run
};

ArenaAllocator::ArenaAllocator(Allocator* backing, size_t max_bytes)
    : backing_(backing), growing_(dynamic_cast<GrowingAllocator*>(backing)), max_bytes_(max_bytes) {}

ArenaAllocator::~ArenaAllocator() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [p, size] : block_size_) backing_->Free(p);
  for (auto& [key, block] : patterns_) backing_->Free(block.data);
}

size_t ArenaAllocator::RoundUp(size_t bytes) {
  // Small blocks round to 256 bytes; larger ones to 1/16 of their power of two, so a block
  // can be reused for requests of nearly the same size without wasting more than ~6%.
  if (bytes <= 4096) return (bytes + 255) / 256 * 256 + (bytes == 0 ? 256 : 0);
  size_t pow2 = 4096;
  while (pow2 < bytes) pow2 <<= 1;
  const size_t step = pow2 / 16;
  return (bytes + step - 1) / step * step;
}

void* ArenaAllocator::Allocate(size_t bytes) {
  const size_t size = RoundUp(bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  ++stats_.allocations;
  // Best fit among cached blocks no more than 25% larger than asked.
  auto it = free_blocks_.lower_bound(size);
  if (it != free_blocks_.end() && it->first <= size + size / 4) {
    void* p = it->second;
    stats_.in_use += it->first;
    free_blocks_.erase(it);
    return p;
  }
  // None fits: grow the largest smaller cached block in place where the backing can. Its pages
  // are resident, so a request at a new, larger shape (a graph output: PP-OCRv4's detector map at
  // each new image size) faults in only the bytes it adds, not the whole size afresh.
  if (growing_ != nullptr && it != free_blocks_.begin()) {
    const auto smaller = std::prev(it);
    const size_t old_size = smaller->first;
    if (max_bytes_ == 0 || stats_.reserved - old_size + size <= max_bytes_) {
      if (void* grown = growing_->Grow(smaller->second, size)) {
        block_size_.erase(smaller->second);
        free_blocks_.erase(smaller);
        block_size_[grown] = size;
        stats_.reserved += size - old_size;
        stats_.in_use += size;
        stats_.peak_reserved = std::max(stats_.peak_reserved, stats_.reserved);
        ++stats_.grown_cached_blocks;
        return grown;
      }
    }
  }
  if (max_bytes_ != 0 && stats_.reserved + size > max_bytes_) {
    TrimLocked();
    ONYX_CHECK(stats_.reserved + size <= max_bytes_, kOutOfMemory, "the memory arena cap of ", max_bytes_,
               " bytes is reached: ", stats_.in_use, " bytes in use, ", size, " more requested");
  }
  void* p = backing_->Allocate(size);
  block_size_[p] = size;
  stats_.reserved += size;
  stats_.in_use += size;
  stats_.peak_reserved = std::max(stats_.peak_reserved, stats_.reserved);
  ++stats_.backing_allocations;
  return p;
}

void ArenaAllocator::Free(void* p) {
  if (p == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = block_size_.find(p);
  ONYX_CHECK(it != block_size_.end(), kRuntime, "arena: freeing a block it does not own");
  stats_.in_use -= it->second;
  free_blocks_.emplace(it->second, p);
}

void ArenaAllocator::TrimLocked() {
  for (auto& [size, p] : free_blocks_) {
    block_size_.erase(p);
    stats_.reserved -= size;
    backing_->Free(p);
  }
  free_blocks_.clear();
  for (auto& [key, block] : patterns_) FreePatternBlockLocked(block);
  patterns_.clear();
  pattern_bytes_ = 0;
}

void ArenaAllocator::FreePatternBlockLocked(PatternBlock block) {
  if (block.data == nullptr) return;
  backing_->Free(block.data);
  stats_.reserved -= block.size;
  --stats_.pattern_blocks;
}

std::shared_ptr<Allocator> ArenaAllocator::BeginPatternRun(const std::string& key) {
  PatternBlock block;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = patterns_.find(key);
    // Shapes without a block of their own borrow the largest idle one (the block keeps their
    // pattern afterwards if it fits): its pages are already resident, while fresh ones would cost
    // the first Runs at a new shape a page fault per 4 KiB (+5.8 ms on a 224x224 detector Run of 4.1 ms).
    if (it == patterns_.end()) it = LargestIdlePatternLocked();
    if (it != patterns_.end()) {
      block = it->second;
      pattern_bytes_ -= block.size;
      patterns_.erase(it);
    }
  }
  return std::make_shared<PatternRun>(shared_from_this(), key, block);
}

void ArenaAllocator::EndPatternRun(const std::string& key, PatternBlock block, size_t high_water,
                                   const std::unordered_set<void*>& run_blocks) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  largest_high_water_ = std::max(largest_high_water_, high_water);
  // The blocks the arena served this Run and has back: the pattern block replaces them, so
  // they go (first, so the memory held never peaks at both). One pass over the free blocks:
  // looking each Run block up among free blocks of its size was quadratic when a Run made
  // many blocks of one size (a fuzzed Loop with 10^6 iterations: minutes in this loop).
  if (!run_blocks.empty()) {
    for (auto it = free_blocks_.begin(); it != free_blocks_.end();) {
      if (run_blocks.count(it->second) == 0) {
        ++it;
        continue;
      }
      stats_.reserved -= it->first;
      backing_->Free(it->second);
      block_size_.erase(it->second);
      it = free_blocks_.erase(it);
    }
  }
  const auto kept = patterns_.find(key);
  // Keep the larger of this Run's block and one a concurrent Run with the same key left.
  if (kept != patterns_.end() && kept->second.size >= std::max(high_water, block.size)) {
    FreePatternBlockLocked(block);
    kept->second.last_use = ++pattern_clock_;
    return;
  }
  if (kept != patterns_.end()) {
    FreePatternBlockLocked(kept->second);
    pattern_bytes_ -= kept->second.size;
    patterns_.erase(kept);
  }
  if (block.data == nullptr || block.size < high_water) {
    if (high_water == 0) {
      FreePatternBlockLocked(block);
      return;
    }
    // A quarter more than this Run needed: a Run at a slightly larger shape (the next sequence
    // length) then fits and faults in only the pages it adds, instead of taking its overflow from
    // fresh mappings and replacing the block. Pages never touched cost no memory.
    const size_t wanted = PatternBlockBytes(high_water);
    // A cached block that fits serves: its pages are resident.
    const auto cached = free_blocks_.lower_bound(high_water);
    if (cached != free_blocks_.end() && cached->first <= wanted + wanted / 4) {
      FreePatternBlockLocked(block);
      block = PatternBlock{cached->second, cached->first};
      block_size_.erase(cached->second);
      free_blocks_.erase(cached);
      ++stats_.pattern_blocks;
      KeepPatternLocked(key, block);
      return;
    }
    // An outgrown block grows in place where the backing can: its resident pages stay, so the
    // next Run faults in only the bytes added (replacing it faulted in the whole block again).
    if (block.data != nullptr && growing_ != nullptr &&
        (max_bytes_ == 0 || stats_.reserved - block.size + wanted <= max_bytes_)) {
      if (void* grown = growing_->Grow(block.data, wanted)) {
        stats_.reserved += wanted - block.size;
        stats_.peak_reserved = std::max(stats_.peak_reserved, stats_.reserved);
        ++stats_.grown_pattern_blocks;
        KeepPatternLocked(key, PatternBlock{grown, wanted});
        return;
      }
    }
    FreePatternBlockLocked(block);
    block = PatternBlock{};
    size_t size = wanted;
    if (max_bytes_ != 0 && stats_.reserved + size > max_bytes_) size = high_water;  // no headroom under the cap
    if (max_bytes_ != 0 && stats_.reserved + size > max_bytes_) return;
    try {
      block = PatternBlock{backing_->Allocate(size), size};
    } catch (...) {
      return;  // no pattern for this key: its Runs then allocate as without one
    }
    stats_.reserved += size;
    stats_.peak_reserved = std::max(stats_.peak_reserved, stats_.reserved);
    ++stats_.backing_allocations;
    ++stats_.pattern_blocks;
  }
  KeepPatternLocked(key, block);
}

void ArenaAllocator::KeepPatternLocked(const std::string& key, PatternBlock block) {
  block.last_use = ++pattern_clock_;
  pattern_bytes_ += block.size;
  patterns_.emplace(key, block);
  EvictPatternsLocked();
}

std::map<std::string, ArenaAllocator::PatternBlock>::iterator ArenaAllocator::LargestIdlePatternLocked() {
  auto largest = patterns_.end();
  for (auto it = patterns_.begin(); it != patterns_.end(); ++it)
    if (largest == patterns_.end() || it->second.size > largest->second.size) largest = it;
  return largest;
}

void ArenaAllocator::EvictPatternsLocked() {
  while (patterns_.size() > kMaxPatterns || pattern_bytes_ > kPatternBudget * PatternBlockBytes(largest_high_water_)) {
    auto oldest = patterns_.begin();
    for (auto it = patterns_.begin(); it != patterns_.end(); ++it)
      if (it->second.last_use < oldest->second.last_use) oldest = it;
    FreePatternBlockLocked(oldest->second);
    pattern_bytes_ -= oldest->second.size;
    patterns_.erase(oldest);
  }
}

void ArenaAllocator::Trim() {
  std::lock_guard<std::mutex> lock(mutex_);
  TrimLocked();
}

ArenaAllocator::Stats ArenaAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Stats stats = stats_;
  stats.idle_pattern_bytes = pattern_bytes_;
  stats.pattern_allocations = pattern_allocations_.load(std::memory_order_relaxed);
  return stats;
}

}  // namespace onyx
