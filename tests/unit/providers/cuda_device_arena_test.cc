// The CUDA provider's arena policy without a GPU: a host-memory backend stands in for cudaMalloc
// and records what the arena reserves, so the extend strategies, chunk reuse and coalescing, and
// the gpu_mem_limit error are checked against sizes worked out by hand.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "onyx/error.h"
#include "providers/cuda/device_arena.h"

namespace onyx {
namespace {

class HostBackend final : public DeviceMemory {
 public:
  explicit HostBackend(std::vector<size_t>* reserved, size_t capacity = ~size_t{0})
      : reserved_(reserved), capacity_(capacity) {}
  void* Reserve(size_t bytes) override {
    if (bytes > capacity_) return nullptr;  // the "device" is full
    reserved_->push_back(bytes);
    return std::malloc(bytes);
  }
  void Release(void* p) override { std::free(p); }
  Device device() const override { return Device{DeviceType::kCuda, 3}; }

 private:
  std::vector<size_t>* reserved_;
  size_t capacity_;
};

constexpr size_t kMiB = size_t{1} << 20;

std::shared_ptr<DeviceArena> Arena(std::vector<size_t>* reserved, size_t limit, ArenaExtendStrategy strategy,
                                   size_t capacity = ~size_t{0}) {
  return std::make_shared<DeviceArena>(std::make_unique<HostBackend>(reserved, capacity), limit, strategy);
}

TEST(CudaDeviceArena, NextPowerOfTwoDoublesItsRegions) {
  std::vector<size_t> reserved;
  auto arena = Arena(&reserved, ~size_t{0}, ArenaExtendStrategy::kNextPowerOfTwo);
  void* a = arena->Allocate(1000);           // 1 MiB region, 1024 bytes of it used
  void* b = arena->Allocate(kMiB - 1024);    // fits the rest of the first region exactly
  void* c = arena->Allocate(10);             // a new region of 2 MiB
  void* d = arena->Allocate(5 * kMiB);       // 4 MiB is next, too small: 8 MiB
  EXPECT_EQ(reserved, (std::vector<size_t>{kMiB, 2 * kMiB, 8 * kMiB}));
  EXPECT_EQ(arena->device(), (Device{DeviceType::kCuda, 3}));
  const auto stats = arena->stats();
  EXPECT_EQ(stats.reserved, 11 * kMiB);
  EXPECT_EQ(stats.in_use, 1024 + (kMiB - 1024) + 256 + 5 * kMiB);
  for (void* p : {a, b, c, d}) arena->Free(p);
  EXPECT_EQ(arena->stats().in_use, 0u);
}

TEST(CudaDeviceArena, SameAsRequestedReservesWhatIsAsked) {
  std::vector<size_t> reserved;
  auto arena = Arena(&reserved, ~size_t{0}, ArenaExtendStrategy::kSameAsRequested);
  arena->Allocate(1000);
  arena->Allocate(3 * kMiB);
  EXPECT_EQ(reserved, (std::vector<size_t>{1024, 3 * kMiB}));  // rounded to 256 bytes
}

TEST(CudaDeviceArena, FreedChunksAreReusedAndCoalesced) {
  std::vector<size_t> reserved;
  auto arena = Arena(&reserved, ~size_t{0}, ArenaExtendStrategy::kNextPowerOfTwo);
  void* a = arena->Allocate(256 * 1024);
  void* b = arena->Allocate(256 * 1024);
  void* c = arena->Allocate(256 * 1024);
  arena->Free(a);
  arena->Free(b);  // a and b merge into one 512 KiB chunk
  void* d = arena->Allocate(512 * 1024);
  EXPECT_EQ(d, a);  // the merged chunk, best fit, no new region
  EXPECT_EQ(reserved.size(), 1u);
  arena->Free(c);
  arena->Free(d);
  void* whole = arena->Allocate(kMiB);  // everything merged back into the region
  EXPECT_EQ(whole, a);
  EXPECT_EQ(reserved.size(), 1u);
}

std::string OomMessage(DeviceArena& arena, size_t bytes) {
  try {
    arena.Allocate(bytes);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kOutOfMemory);
    return e.what();
  }
  ADD_FAILURE() << "allocated " << bytes << " bytes past the limit";
  return "";
}

TEST(CudaDeviceArena, TheLimitIsAClearOutOfMemoryError) {
  std::vector<size_t> reserved;
  auto arena = Arena(&reserved, 3 * kMiB, ArenaExtendStrategy::kNextPowerOfTwo);
  arena->Allocate(kMiB);  // the first region, full
  // The next power-of-two region (2 MiB) fits the limit exactly.
  arena->Allocate(kMiB + 512);
  EXPECT_EQ(reserved, (std::vector<size_t>{kMiB, 2 * kMiB}));
  const std::string message = OomMessage(*arena, kMiB);
  EXPECT_NE(message.find("cannot allocate 1048576 bytes"), std::string::npos) << message;
  EXPECT_NE(message.find("gpu_mem_limit is 3145728 bytes"), std::string::npos) << message;
  // What is left in the second region still serves small requests.
  EXPECT_NE(arena->Allocate(1024), nullptr);
}

TEST(CudaDeviceArena, ReservesOnlyTheRequestWhereThePowerOfTwoPassesTheLimit) {
  std::vector<size_t> reserved;
  auto arena = Arena(&reserved, kMiB + 4096, ArenaExtendStrategy::kNextPowerOfTwo);
  arena->Allocate(kMiB);
  arena->Allocate(4096);  // 2 MiB would pass the limit: 4096 bytes, as asked
  EXPECT_EQ(reserved, (std::vector<size_t>{kMiB, 4096}));
}

TEST(CudaDeviceArena, ADeviceOutOfMemoryIsAnErrorToo) {
  std::vector<size_t> reserved;
  auto arena = Arena(&reserved, ~size_t{0}, ArenaExtendStrategy::kSameAsRequested, /*capacity=*/kMiB);
  const std::string message = OomMessage(*arena, 2 * kMiB);
  EXPECT_NE(message.find("the device has no 2097152 bytes free"), std::string::npos) << message;
}

}  // namespace
}  // namespace onyx
