#include "tensor/arena_allocator.h"

#include "base/check.h"

namespace onyx {

ArenaAllocator::ArenaAllocator(Allocator* backing, size_t max_bytes) : backing_(backing), max_bytes_(max_bytes) {}

ArenaAllocator::~ArenaAllocator() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [p, size] : block_size_) backing_->Free(p);
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
  // Best fit among cached blocks no more than 25% larger than asked.
  auto it = free_blocks_.lower_bound(size);
  if (it != free_blocks_.end() && it->first <= size + size / 4) {
    void* p = it->second;
    stats_.in_use += it->first;
    free_blocks_.erase(it);
    return p;
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
}

void ArenaAllocator::Trim() {
  std::lock_guard<std::mutex> lock(mutex_);
  TrimLocked();
}

ArenaAllocator::Stats ArenaAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace onyx
