// ThreadPool::ParallelFor separates its caller from a pinned worker's processor, as WakeWorkers
// does at a Run's start: the scheduler may put the caller there in mid-Run, and then the two
// time-shared one processor for the rest of it.
#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <vector>

#include "platform/thread_affinity.h"
#include "platform/thread_pool.h"

namespace onyx {
namespace {

void ExpectWholeLoop(ThreadPool& pool) {
  std::vector<std::atomic<int>> hits(256);
  pool.ParallelFor(256, 1e6, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
  });
  for (const auto& h : hits) ASSERT_EQ(h.load(), 1);
}

TEST(ThreadPoolSeparate, ASplitLoopMovesAnAutoPinnedWorkerOffTheCallersProcessor) {
  const std::vector<int> cpus = AvailableProcessors();
  if (cpus.size() < 2) GTEST_SKIP() << "needs two processors";
  const std::vector<int> original = GetThreadAffinity(CurrentThreadId());
  ThreadPoolOptions options;
  options.num_threads = 2;
  options.worker_affinities = {{cpus[1]}};
  options.affinities_required = false;  // pins the pool's owner chose: the worker may move
  ThreadPool pool(options);
  pool.WakeWorkers();  // the Run's start, with the caller elsewhere
  // The scheduler puts the caller on the worker's processor in mid-Run (a new affinity moves a
  // thread at once; the old one lets it stay there). Tried again should a busy machine's
  // scheduler move the caller away before the loop starts.
  const int worker_tid = pool.WorkerThreadIds()[0];
  for (int attempt = 0; attempt < 20 && GetThreadAffinity(worker_tid) == std::vector<int>{cpus[1]}; ++attempt) {
    ASSERT_TRUE(SetCurrentThreadAffinity({cpus[1]}));
    ASSERT_TRUE(SetCurrentThreadAffinity(original));
    ExpectWholeLoop(pool);
  }
  EXPECT_EQ(GetThreadAffinity(CurrentThreadId()), original);
  EXPECT_EQ(GetThreadAffinity(worker_tid), std::vector<int>{cpus[0]});
}

TEST(ThreadPoolSeparate, ASplitLoopMovesTheCallerOffAUserPinnedWorkersProcessor) {
  const std::vector<int> cpus = AvailableProcessors();
  if (cpus.size() < 2) GTEST_SKIP() << "needs two processors";
  const std::vector<int> original = GetThreadAffinity(CurrentThreadId());
  ThreadPoolOptions options;
  options.num_threads = 2;
  options.worker_affinities = {{cpus[1]}};
  ThreadPool pool(options);
  pool.WakeWorkers();
  ASSERT_TRUE(SetCurrentThreadAffinity({cpus[1]}));
  ASSERT_TRUE(SetCurrentThreadAffinity(original));
  ExpectWholeLoop(pool);
  EXPECT_NE(sched_getcpu(), cpus[1]);
  EXPECT_EQ(GetThreadAffinity(CurrentThreadId()), original);
  EXPECT_EQ(GetThreadAffinity(pool.WorkerThreadIds()[0]), std::vector<int>{cpus[1]});  // user pins stay
}

TEST(ThreadPoolSeparate, ALoopTooSmallToSplitLeavesThePinsAlone) {
  const std::vector<int> cpus = AvailableProcessors();
  if (cpus.size() < 2) GTEST_SKIP() << "needs two processors";
  const std::vector<int> original = GetThreadAffinity(CurrentThreadId());
  ThreadPoolOptions options;
  options.num_threads = 2;
  options.worker_affinities = {{cpus[1]}};
  options.affinities_required = false;
  ThreadPool pool(options);
  ASSERT_TRUE(SetCurrentThreadAffinity({cpus[1]}));
  ASSERT_TRUE(SetCurrentThreadAffinity(original));
  int calls = 0;
  pool.ParallelFor(4, 1.0, [&](int64_t, int64_t) { ++calls; });  // runs inline
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(GetThreadAffinity(pool.WorkerThreadIds()[0]), std::vector<int>{cpus[1]});
}

}  // namespace
}  // namespace onyx
