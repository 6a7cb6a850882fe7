// Fixed blocks go to the threads in lanes: each thread runs one contiguous run of blocks
// (its own lane from the front, then what it takes from the others' backs), the caller from
// block 0. So a thread gets the same part of every loop split alike (thread_pool.cc, Job).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "platform/thread_pool.h"

namespace onyx {
namespace {

// Which thread ran each block of a 2-thread loop of `blocks` blocks: 0 the caller, 1 the worker.
std::vector<int> BlockOwners(ThreadPool& pool, int64_t blocks) {
  const std::thread::id caller = std::this_thread::get_id();
  std::mutex m;
  std::vector<int> owner(static_cast<size_t>(blocks), -1);
  pool.ParallelFor(blocks, 1e7, [&](int64_t b, int64_t e) {
    // Long enough that the worker, spinning from the loop before, takes part.
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    std::lock_guard<std::mutex> lock(m);
    for (int64_t i = b; i < e; ++i) owner[static_cast<size_t>(i)] = std::this_thread::get_id() == caller ? 0 : 1;
  });
  return owner;
}

// Where a 0/1 sequence switches owner, counting the wrap from the end back to the start.
int CircularSwitches(const std::vector<int>& owner) {
  int switches = 0;
  for (size_t i = 0; i < owner.size(); ++i) switches += owner[i] != owner[(i + 1) % owner.size()];
  return switches;
}

TEST(ThreadPoolLanes, EachThreadRunsOneContiguousRunOfBlocks) {
  ThreadPool pool(2);
  BlockOwners(pool, 8);  // wakes the worker
  int shared = 0;
  for (int round = 0; round < 5; ++round) {
    const std::vector<int> owner = BlockOwners(pool, 8);  // 8 blocks of one item (4 a thread)
    ASSERT_TRUE(std::none_of(owner.begin(), owner.end(), [](int o) { return o < 0; }));
    EXPECT_EQ(owner[0], 0) << "the caller starts its lane at block 0";
    const int workers_blocks = static_cast<int>(std::count(owner.begin(), owner.end(), 1));
    if (workers_blocks == 0) continue;  // the worker slept through the loop: nothing to check
    ++shared;
    // One shared counter hands blocks out by timing (0 1 0 1 ...): many switches. Lanes give
    // the worker one run inside the loop (wrapping at most once through the caller's steals).
    EXPECT_EQ(CircularSwitches(owner), 2) << "blocks interleaved between the threads";
  }
  EXPECT_GT(shared, 0) << "the worker never took part";
}

// A thread's part is the same from loop to loop, so data a loop left in its cache is what it
// reads in the next (block 7 belongs to the worker's lane, block 0 to the caller's).
TEST(ThreadPoolLanes, TheWorkerRunsTheSecondHalfFromItsFront) {
  ThreadPool pool(2);
  BlockOwners(pool, 8);
  int both = 0;
  for (int round = 0; round < 5; ++round) {
    const std::vector<int> owner = BlockOwners(pool, 8);
    if (std::count(owner.begin(), owner.end(), 1) < 2) continue;
    ++both;
    EXPECT_EQ(owner[4], 1) << "the worker's lane starts at block 4";
  }
  EXPECT_GT(both, 0) << "the worker never ran two blocks";
}

}  // namespace
}  // namespace onyx
