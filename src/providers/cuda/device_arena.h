// The CUDA provider's device memory arena, kept apart from cudaMalloc so its policy is tested
// without a GPU: regions are reserved from a DeviceMemory backend (cudaMalloc on a GPU, host
// memory in tests) as ONNX Runtime's arena_extend_strategy says, chunks are carved from them
// best-fit and coalesced when freed, and gpu_mem_limit caps the bytes reserved: reaching it is
// Error(kOutOfMemory) naming the request and the limit, never a crash.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "onyx/allocator.h"

namespace onyx {

// ONNX Runtime's ArenaExtendStrategy: kNextPowerOfTwo reserves regions that double in size (the
// first 1 MiB), kSameAsRequested reserves exactly what a request needs.
enum class ArenaExtendStrategy { kNextPowerOfTwo = 0, kSameAsRequested = 1 };

class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  // Reserves `bytes` of device memory; null when the device has no more.
  virtual void* Reserve(size_t bytes) = 0;
  virtual void Release(void* p) = 0;
  virtual Device device() const = 0;
};

class DeviceArena final : public Allocator, public std::enable_shared_from_this<DeviceArena> {
 public:
  static constexpr size_t kChunkAlignment = 256;     // what cudaMalloc guarantees
  static constexpr size_t kFirstRegion = size_t{1} << 20;

  // limit: most bytes reserved from the backend (ONNX Runtime's gpu_mem_limit).
  DeviceArena(std::unique_ptr<DeviceMemory> backend, size_t limit, ArenaExtendStrategy strategy,
              std::string label = "CUDA");
  ~DeviceArena() override;

  void* Allocate(size_t bytes) override;
  void Free(void* p) override;
  Device device() const override { return backend_->device(); }
  std::shared_ptr<void> KeepAlive() override { return shared_from_this(); }

  struct Stats {
    size_t in_use = 0;    // bytes handed out (rounded to kChunkAlignment)
    size_t reserved = 0;  // bytes reserved from the backend
    size_t regions = 0;
    size_t peak_in_use = 0;
  };
  Stats stats() const;
  // The size of each region reserved so far, in order.
  std::vector<size_t> region_sizes() const;

 private:
  struct Region {
    char* base = nullptr;
    size_t size = 0;
    std::map<size_t, size_t> free;  // offset -> size
  };
  void* TakeLocked(size_t bytes);  // best fit from the free chunks; null when none fits
  size_t NextRegionSize(size_t bytes) const;

  std::unique_ptr<DeviceMemory> backend_;
  size_t limit_;
  ArenaExtendStrategy strategy_;
  std::string label_;
  mutable std::mutex mutex_;
  std::vector<Region> regions_;
  std::unordered_map<void*, std::pair<size_t, size_t>> used_;  // pointer -> (region, size)
  size_t next_region_ = kFirstRegion;
  Stats stats_;
};

}  // namespace onyx
