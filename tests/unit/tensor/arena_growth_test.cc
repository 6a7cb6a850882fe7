// Memory-pattern blocks under the CPU arena's real backing: an outgrown block grows in place,
// keeping the pages earlier Runs faulted in, so a Run at a larger shape pays fresh pages only for
// the bytes it adds (docs/memory.md, "The first Run at a new shape").
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstring>

#include "onyx/error.h"
#include "sanitizer_test_util.h"
#include "tensor/arena_allocator.h"

namespace onyx {
namespace {

// Under ASan the backing takes every block from malloc.
using test::kAddressSanitizer;

constexpr size_t kMiB = size_t{1} << 20;

long MinorFaults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

TEST(ArenaGrowth, AnOutgrownBlockKeepsItsResidentPages) {
  if (kAddressSanitizer) GTEST_SKIP() << "the arena's backing maps nothing under AddressSanitizer";
  auto arena = std::make_shared<ArenaAllocator>(CpuArenaBackingAllocator());
  {
    auto run = arena->BeginPatternRun("small");  // recorded: the arena serves it
    run->Free(run->Allocate(kMiB));
  }
  EXPECT_EQ(arena->stats().reserved, kMiB + kMiB / 4);
  {
    auto run = arena->BeginPatternRun("small");  // in the block: fill it
    void* p = run->Allocate(kMiB);
    std::memset(p, 0x5A, kMiB);
    run->Free(p);
  }
  {
    auto run = arena->BeginPatternRun("large");  // borrows the block, outgrows it
    run->Free(run->Allocate(2 * kMiB));
  }
  const ArenaAllocator::Stats grown = arena->stats();
  EXPECT_EQ(grown.grown_pattern_blocks, 1u);
  EXPECT_EQ(grown.pattern_blocks, 1u);
  EXPECT_EQ(grown.reserved, 2 * kMiB + kMiB / 2);
  {
    auto run = arena->BeginPatternRun("large");
    auto* p = static_cast<unsigned char*>(run->Allocate(2 * kMiB));
    EXPECT_EQ(arena->stats().pattern_allocations, grown.pattern_allocations + 1);  // in the block
    // The first MiB still holds what the earlier Run wrote, without faulting pages in (a fresh
    // mapping reads zeros, a page fault per 4 KiB: 256 here).
    const long faults = MinorFaults();
    size_t kept = 0;
    for (size_t i = 0; i < kMiB; i += 64) kept += p[i] == 0x5A;
    EXPECT_LT(MinorFaults() - faults, 16);
    EXPECT_EQ(kept, kMiB / 64);
    EXPECT_EQ(p[kMiB + kMiB / 2], 0);  // the added bytes are new
    run->Free(p);
  }
  EXPECT_EQ(arena->stats().backing_allocations, grown.backing_allocations);
}

TEST(ArenaGrowth, ACachedBlockGrowsForALargerRequest) {
  if (kAddressSanitizer) GTEST_SKIP() << "the arena's backing maps nothing under AddressSanitizer";
  auto arena = std::make_shared<ArenaAllocator>(CpuArenaBackingAllocator());
  void* small = arena->Allocate(kMiB);  // a graph output at one shape
  std::memset(small, 0x5A, kMiB);
  arena->Free(small);
  const size_t backing = arena->stats().backing_allocations;
  auto* p = static_cast<unsigned char*>(arena->Allocate(3 * kMiB / 2));  // at a larger shape
  const ArenaAllocator::Stats s = arena->stats();
  EXPECT_EQ(s.grown_cached_blocks, 1u);
  EXPECT_EQ(s.backing_allocations, backing);
  EXPECT_EQ(s.reserved, 3 * kMiB / 2);
  const long faults = MinorFaults();
  size_t kept = 0;
  for (size_t i = 0; i < kMiB; i += 64) kept += p[i] == 0x5A;
  EXPECT_LT(MinorFaults() - faults, 16);
  EXPECT_EQ(kept, kMiB / 64);
  arena->Free(p);
  // A smaller request takes it back as it is (no more than a quarter larger), not grown.
  void* again = arena->Allocate(5 * kMiB / 4);
  EXPECT_EQ(again, p);
  arena->Free(again);
  EXPECT_EQ(arena->stats().grown_cached_blocks, 1u);
}

TEST(ArenaGrowth, GrowingACachedBlockRespectsTheCap) {
  auto arena = std::make_shared<ArenaAllocator>(CpuArenaBackingAllocator(), 3 * kMiB / 2);
  arena->Free(arena->Allocate(kMiB));
  EXPECT_THROW(arena->Allocate(2 * kMiB), Error);
  EXPECT_EQ(arena->stats().grown_cached_blocks, 0u);
  EXPECT_LE(arena->stats().reserved, 3 * kMiB / 2);
}

TEST(ArenaGrowth, BlocksFromMallocAreReplacedInstead) {
  // Under 256 KiB the backing takes blocks from malloc, which it cannot grow.
  auto arena = std::make_shared<ArenaAllocator>(CpuArenaBackingAllocator());
  for (size_t bytes : {size_t{64} << 10, size_t{128} << 10, size_t{130} << 10}) {
    auto run = arena->BeginPatternRun(std::to_string(bytes));
    run->Free(run->Allocate(bytes));
  }
  EXPECT_EQ(arena->stats().grown_pattern_blocks, 0u);
  EXPECT_EQ(arena->stats().pattern_blocks, 1u);
  EXPECT_EQ(arena->stats().reserved, size_t{160} << 10);  // 128 KiB and a quarter; 130 KiB fit
}

}  // namespace
}  // namespace onyx
