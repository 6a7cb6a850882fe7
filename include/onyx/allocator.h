// Memory allocators. A device (CUDA later) implements Allocator for its own memory; tensors
// remember which device their bytes live on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace onyx {

enum class DeviceType : int8_t { kCpu = 0, kCuda = 1 };

struct Device {
  DeviceType type = DeviceType::kCpu;
  int16_t id = 0;
  bool operator==(const Device&) const = default;
  std::string ToString() const;
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  // Returns memory aligned to at least kAlignment bytes, or throws Error(kOutOfMemory).
  virtual void* Allocate(size_t bytes) = 0;
  virtual void Free(void* p) = 0;
  virtual Device device() const = 0;
  // Something that keeps this allocator alive while memory from it is in use (tensors hold
  // it); null for allocators that live forever.
  virtual std::shared_ptr<void> KeepAlive() { return nullptr; }

  static constexpr size_t kAlignment = 64;
};

// The process-wide plain CPU allocator (aligned malloc). Never null.
Allocator* CpuAllocator();

}  // namespace onyx
