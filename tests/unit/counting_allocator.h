// A CPU allocator that tracks live and peak bytes, so tests can see values released after
// their last reader.
#pragma once

#include <algorithm>
#include <map>
#include <mutex>

#include "onyx/allocator.h"

namespace onyx::test {

class CountingAllocator final : public Allocator {
 public:
  void* Allocate(size_t bytes) override {
    void* p = CpuAllocator()->Allocate(bytes);
    std::lock_guard<std::mutex> lock(mutex_);
    sizes_[p] = bytes;
    live_ += bytes;
    ++allocations_;
    peak_ = std::max(peak_, live_);
    return p;
  }
  void Free(void* p) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      live_ -= sizes_[p];
      sizes_.erase(p);
    }
    CpuAllocator()->Free(p);
  }
  Device device() const override { return Device{}; }
  size_t peak() const { return peak_; }
  size_t allocations() const { return allocations_; }

 private:
  std::mutex mutex_;
  std::map<void*, size_t> sizes_;
  size_t live_ = 0, peak_ = 0, allocations_ = 0;
};

}  // namespace onyx::test
