#include "providers/cuda/device_arena.h"

#include "base/check.h"

namespace onyx {

DeviceArena::DeviceArena(std::unique_ptr<DeviceMemory> backend, size_t limit, ArenaExtendStrategy strategy,
                         std::string label)
    : backend_(std::move(backend)), limit_(limit), strategy_(strategy), label_(std::move(label)) {}

DeviceArena::~DeviceArena() {
  for (const Region& r : regions_) backend_->Release(r.base);
}

size_t DeviceArena::NextRegionSize(size_t bytes) const {
  if (strategy_ == ArenaExtendStrategy::kSameAsRequested) return bytes;
  size_t size = next_region_;
  while (size < bytes) size *= 2;
  return size;
}

void* DeviceArena::TakeLocked(size_t bytes) {
  size_t best_region = 0, best_offset = 0, best_size = 0;
  for (size_t r = 0; r < regions_.size(); ++r)
    for (const auto& [offset, size] : regions_[r].free)
      if (size >= bytes && (best_size == 0 || size < best_size)) {
        best_region = r;
        best_offset = offset;
        best_size = size;
      }
  if (best_size == 0) return nullptr;
  Region& region = regions_[best_region];
  region.free.erase(best_offset);
  if (best_size > bytes) region.free.emplace(best_offset + bytes, best_size - bytes);
  void* p = region.base + best_offset;
  used_[p] = {best_region, bytes};
  stats_.in_use += bytes;
  if (stats_.in_use > stats_.peak_in_use) stats_.peak_in_use = stats_.in_use;
  return p;
}

void* DeviceArena::Allocate(size_t requested) {
  const size_t bytes = requested == 0 ? kChunkAlignment : (requested + kChunkAlignment - 1) / kChunkAlignment * kChunkAlignment;
  std::lock_guard<std::mutex> lock(mutex_);
  if (void* p = TakeLocked(bytes)) return p;
  // Extend: the strategy's region size, or just the request where that would pass the limit
  // (as ONNX Runtime's arena does before giving up).
  size_t size = NextRegionSize(bytes);
  if (stats_.reserved + size > limit_) size = bytes;
  ONYX_CHECK(stats_.reserved + size <= limit_ && size >= bytes, kOutOfMemory, label_, " arena: cannot allocate ",
             requested, " bytes (", bytes, " rounded): it holds ", stats_.reserved, " bytes (", stats_.in_use,
             " in use, the largest free chunk too small) and gpu_mem_limit is ", limit_, " bytes");
  void* base = backend_->Reserve(size);
  ONYX_CHECK(base != nullptr, kOutOfMemory, label_, " arena: the device has no ", size, " bytes free for a request of ",
             requested, " bytes (the arena holds ", stats_.reserved, " bytes; gpu_mem_limit is ", limit_, ")");
  Region region;
  region.base = static_cast<char*>(base);
  region.size = size;
  region.free.emplace(0, size);
  regions_.push_back(std::move(region));
  stats_.reserved += size;
  stats_.regions = regions_.size();
  if (strategy_ == ArenaExtendStrategy::kNextPowerOfTwo && size >= next_region_) next_region_ = size * 2;
  return TakeLocked(bytes);
}

void DeviceArena::Free(void* p) {
  if (p == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = used_.find(p);
  ONYX_CHECK(it != used_.end(), kRuntime, label_, " arena: freeing memory it did not hand out");
  const auto [r, bytes] = it->second;
  used_.erase(it);
  stats_.in_use -= bytes;
  Region& region = regions_[r];
  size_t offset = static_cast<size_t>(static_cast<char*>(p) - region.base), size = bytes;
  // Coalesce with the free neighbours.
  auto next = region.free.lower_bound(offset);
  if (next != region.free.end() && next->first == offset + size) {
    size += next->second;
    next = region.free.erase(next);
  }
  if (next != region.free.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == offset) {
      offset = prev->first;
      size += prev->second;
      region.free.erase(prev);
    }
  }
  region.free.emplace(offset, size);
}

DeviceArena::Stats DeviceArena::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

std::vector<size_t> DeviceArena::region_sizes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<size_t> sizes;
  for (const Region& r : regions_) sizes.push_back(r.size);
  return sizes;
}

}  // namespace onyx
