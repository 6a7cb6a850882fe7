// The arena's memory patterns (SessionOptions::enable_mem_pattern): a Run with the shapes of an
// earlier one takes its intermediates from one kept block, asking the arena for nothing.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "model_builder.h"
#include "onyx/session.h"
#include "runtime/session_impl.h"
#include "tensor/arena_allocator.h"

namespace onyx {
namespace {

// The same requests each time, some freed before others are made (as a Run does).
std::vector<void*> RunRequests(Allocator& a) {
  void* x = a.Allocate(1000);
  void* y = a.Allocate(3000);
  a.Free(x);
  void* z = a.Allocate(500);  // fits where x was
  void* w = a.Allocate(5000);
  a.Free(y);
  a.Free(z);
  a.Free(w);
  return {x, y, z, w};
}

TEST(ArenaPattern, TheSecondRunWithTheSameKeyUsesTheKeptBlock) {
  auto arena = std::make_shared<ArenaAllocator>(CpuAllocator());
  std::vector<void*> first = RunRequests(*arena->BeginPatternRun("k"));
  const ArenaAllocator::Stats after_first = arena->stats();
  EXPECT_EQ(after_first.allocations, 4u);  // recorded: served by the arena
  EXPECT_EQ(after_first.pattern_blocks, 1u);
  EXPECT_EQ(after_first.pattern_allocations, 0u);

  for (int run = 0; run < 2; ++run) {
    std::vector<void*> again = RunRequests(*arena->BeginPatternRun("k"));
    const ArenaAllocator::Stats s = arena->stats();
    EXPECT_EQ(s.allocations, after_first.allocations) << run;  // the arena was not asked
    EXPECT_EQ(s.backing_allocations, after_first.backing_allocations) << run;
    EXPECT_EQ(s.pattern_allocations, 4u * (run + 1)) << run;
    EXPECT_EQ(s.pattern_blocks, 1u);
    // First fit puts z where x was: the block is as large as the peak, not the sum.
    EXPECT_EQ(again[2], again[0]);
    EXPECT_LT(static_cast<char*>(again[3]) - static_cast<char*>(again[0]), 1024 + 3008 + 64);
  }
  // Another key borrows the idle block (its pages are resident) and, as it fits, keeps it.
  RunRequests(*arena->BeginPatternRun("other"));
  EXPECT_EQ(arena->stats().pattern_allocations, 12u);
  EXPECT_EQ(arena->stats().allocations, after_first.allocations);
  EXPECT_EQ(arena->stats().pattern_blocks, 1u);
}

TEST(ArenaPattern, BlocksAreAQuarterLargerThanTheRunNeeded) {
  auto arena = std::make_shared<ArenaAllocator>(CpuAllocator());
  auto run_of = [&](const std::string& key, size_t bytes) {
    auto pattern = arena->BeginPatternRun(key);
    pattern->Free(pattern->Allocate(bytes));
  };
  run_of("small", 64 * 1024);
  EXPECT_EQ(arena->stats().reserved, 80u * 1024);  // the high-water mark and a quarter
  const size_t backing = arena->stats().backing_allocations;
  run_of("larger", 78 * 1024);  // a slightly larger shape fits the borrowed block: no new memory
  EXPECT_EQ(arena->stats().backing_allocations, backing);
  EXPECT_EQ(arena->stats().allocations, 1u);  // only the first Run's request went to the arena
  EXPECT_EQ(arena->stats().pattern_allocations, 1u);
  run_of("larger still", 96 * 1024);  // does not fit: served by the arena, then a block of 120 KiB
  EXPECT_EQ(arena->stats().pattern_blocks, 1u);
  EXPECT_EQ(arena->stats().reserved, 120u * 1024);
  EXPECT_EQ(arena->stats().grown_pattern_blocks, 0u);  // CpuAllocator() cannot grow a block
  run_of("largest", 110 * 1024);
  EXPECT_EQ(arena->stats().pattern_allocations, 2u);
  EXPECT_EQ(arena->stats().reserved, 120u * 1024);
}

TEST(ArenaPattern, RequestsInAnotherOrderFallBackAndTheBlockGrows) {
  auto arena = std::make_shared<ArenaAllocator>(CpuAllocator());
  {
    auto run = arena->BeginPatternRun("k");
    run->Free(run->Allocate(1000));
  }
  {
    auto run = arena->BeginPatternRun("k");
    void* a = run->Allocate(1000);  // in the block
    void* b = run->Allocate(1000);  // past it: from the arena
    EXPECT_NE(a, b);
    std::memset(a, 1, 1000);
    std::memset(b, 2, 1000);
    EXPECT_EQ(static_cast<char*>(a)[999], 1);
    run->Free(a);
    run->Free(b);
    EXPECT_EQ(arena->stats().pattern_allocations, 1u);
  }
  const size_t allocations = arena->stats().allocations;
  {
    auto run = arena->BeginPatternRun("k");
    void* a = run->Allocate(1000);
    void* b = run->Allocate(1000);
    run->Free(a);
    run->Free(b);
  }
  EXPECT_EQ(arena->stats().allocations, allocations);  // both now fit the grown block
  EXPECT_EQ(arena->stats().pattern_blocks, 1u);
}

TEST(ArenaPattern, TheBlockWaitsForTensorsThatOutliveTheRun) {
  auto arena = std::make_shared<ArenaAllocator>(CpuAllocator());
  RunRequests(*arena->BeginPatternRun("k"));
  Tensor kept;
  {
    auto run = arena->BeginPatternRun("k");
    kept = Tensor(DataType::kFloat, {16}, run.get());
  }
  // The block is still in use by `kept`: a Run now records without it.
  const size_t pattern_allocations = arena->stats().pattern_allocations;
  RunRequests(*arena->BeginPatternRun("k"));
  EXPECT_EQ(arena->stats().pattern_allocations, pattern_allocations);
  kept = Tensor();
  RunRequests(*arena->BeginPatternRun("k"));
  EXPECT_EQ(arena->stats().pattern_allocations, pattern_allocations + 4);
  EXPECT_EQ(arena->stats().pattern_blocks, 1u);  // the two Runs' blocks became one
}

TEST(ArenaPattern, ConcurrentRunsWithOneKeyNeverShareBytes) {
  auto arena = std::make_shared<ArenaAllocator>(CpuAllocator());
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 300; ++i) {
        auto run = arena->BeginPatternRun("k");
        std::vector<char*> blocks;
        for (size_t size : {4096, 1024, 8192}) {
          blocks.push_back(static_cast<char*>(run->Allocate(size)));
          std::memset(blocks.back(), t + 1, size);
        }
        std::this_thread::yield();
        for (size_t k = 0; k < blocks.size(); ++k)
          if (blocks[k][0] != t + 1 || blocks[k][1023] != t + 1) ++bad;
        for (char* p : blocks) run->Free(p);
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(arena->stats().pattern_allocations, 0u);
  EXPECT_EQ(arena->stats().pattern_blocks, 1u);
  EXPECT_EQ(arena->stats().in_use, 0u);
}

TEST(ArenaPattern, TrimReturnsPatternBlocks) {
  auto arena = std::make_shared<ArenaAllocator>(CpuAllocator());
  RunRequests(*arena->BeginPatternRun("k"));
  arena->Trim();
  EXPECT_EQ(arena->stats().pattern_blocks, 0u);
  EXPECT_EQ(arena->stats().reserved, 0u);
}

// x -> 6 unary nodes -> y over 16 KiB values.
std::string ChainModel() {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {4096}).Output("y", DataType::kFloat, {4096});
  std::string prev = "x";
  for (int i = 0; i < 6; ++i) {
    const std::string next = i == 5 ? "y" : "t" + std::to_string(i);
    b.Node(i % 2 == 0 ? "Neg" : "Abs", {prev}, {next});
    prev = next;
  }
  return b.Bytes();
}

// Arena stats after each of three Runs with the same shapes.
std::vector<ArenaAllocator::Stats> ThreeRuns(bool pattern) {
  const std::string bytes = ChainModel();
  SessionOptions options;
  options.enable_mem_pattern = pattern;
  options.graph_optimization_level = GraphOptimizationLevel::kDisabled;
  Session s(bytes.data(), bytes.size(), options);
  std::vector<ArenaAllocator::Stats> stats;
  for (int i = 0; i < 3; ++i) {
    auto out = s.Run({{"x", test::FloatTensor({4096})}});
    EXPECT_EQ(out[0].tensor().data<float>()[7], 7.0f);  // |-x|
    stats.push_back(s.impl().arena()->stats());
  }
  return stats;
}

TEST(ArenaPattern, SessionRunsWithTheSameShapesUseOneBlock) {
  const auto on = ThreeRuns(true), off = ThreeRuns(false);
  for (int i = 1; i < 3; ++i) {
    // With the pattern, the intermediates come from the block (one buffer: t1..t4 take t0's in
    // place, see GraphPlan::PlanInPlaceOutputs): the arena serves only y.
    EXPECT_EQ(on[i].allocations - on[i - 1].allocations, 1u) << i;
    EXPECT_EQ(on[i].pattern_allocations - on[i - 1].pattern_allocations, 1u) << i;
    EXPECT_EQ(on[i].backing_allocations, on[0].backing_allocations) << i;
    // Without it, the arena serves both buffers (t0's and y's) from its cache.
    EXPECT_EQ(off[i].allocations - off[i - 1].allocations, 2u) << i;
    EXPECT_EQ(off[i].pattern_allocations, 0u);
    EXPECT_EQ(off[i].backing_allocations, off[0].backing_allocations) << i;
  }
  EXPECT_EQ(on[2].pattern_blocks, 1u);
  EXPECT_EQ(off[2].pattern_blocks, 0u);
}

// A Run that holds many blocks of one size at once (a Loop's scan outputs) ends in time linear in
// them: the end of the Run once searched the free blocks of each one's size for it (quadratic:
// a fuzzed Loop of 10^6 iterations spent minutes there).
TEST(ArenaPattern, ARunOfManyBlocksOfOneSizeEndsInLinearTime) {
  auto arena = std::make_shared<ArenaAllocator>(CpuAllocator());
  constexpr int kBlocks = 200000;
  const auto start = std::chrono::steady_clock::now();
  {
    auto run = arena->BeginPatternRun("loop");
    std::vector<void*> held;
    held.reserve(kBlocks);
    for (int i = 0; i < kBlocks; ++i) held.push_back(run->Allocate(64));
    for (void* p : held) run->Free(p);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 5.0);  // 0.1 s here; the quadratic search took 9 s for half as many
  // The Run's blocks went back and one pattern block of the peak stays.
  const ArenaAllocator::Stats s = arena->stats();
  EXPECT_EQ(s.pattern_blocks, 1u);
  EXPECT_LT(s.reserved, 2u * kBlocks * 64 + (1u << 20));
}

}  // namespace
}  // namespace onyx
