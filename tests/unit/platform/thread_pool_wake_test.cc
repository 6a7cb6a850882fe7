// ThreadPool::WakeWorkers: a sleeping worker is woken to spin for the next loop, and goes back
// to sleep when none comes. Checked through the pool's sleep count, waiting (up to seconds on a
// loaded machine) for what must eventually happen, never for how fast.
#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "platform/thread_affinity.h"
#include "platform/thread_pool.h"

namespace onyx {
namespace {

// Waits up to 10 s for the pool's workers to have gone to sleep at least `count` times.
bool WaitForSleeps(const ThreadPool& pool, uint64_t count) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (pool.stats().sleeps < count) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

TEST(ThreadPoolWake, WakesASleepingWorkerThatSleepsAgainWithoutWork) {
  ThreadPoolOptions options;
  options.num_threads = 2;
  options.spin_nanos = 200'000;  // 0.2 ms
  ThreadPool pool(options);
  ASSERT_TRUE(WaitForSleeps(pool, 1));  // started, spun, slept
  const uint64_t before = pool.stats().sleeps;
  pool.WakeWorkers();
  // Woken, it finds no loop, spins, and sleeps again: one more sleep.
  ASSERT_TRUE(WaitForSleeps(pool, before + 1));
  // The woken pool still runs loops whole, once each.
  std::vector<std::atomic<int>> hits(512);
  pool.WakeWorkers();
  pool.ParallelFor(512, 1e6, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
  });
  for (const auto& h : hits) ASSERT_EQ(h.load(), 1);
}

TEST(ThreadPoolWake, NoOpWithoutSpinningOrWorkers) {
  ThreadPool single(1);
  single.WakeWorkers();  // no workers
  EXPECT_EQ(single.stats().sleeps, 0u);

  ThreadPoolOptions options;
  options.num_threads = 2;
  options.allow_spinning = false;
  ThreadPool pool(options);
  ASSERT_TRUE(WaitForSleeps(pool, 1));
  const uint64_t before = pool.stats().sleeps;
  // Without spinning a woken worker would only sleep again: it is left asleep, so a loop run
  // after the call is the only thing that wakes it (one more sleep at most, none from the call).
  for (int i = 0; i < 20; ++i) pool.WakeWorkers();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(pool.stats().sleeps, before);
}

TEST(ThreadPoolWake, MovesTheCallerOffAPinnedWorkersProcessorAndKeepsItsAffinity) {
  const std::vector<int> cpus = AvailableProcessors();
  if (cpus.size() < 2) GTEST_SKIP() << "needs two processors";
  const std::vector<int> original = GetThreadAffinity(CurrentThreadId());
  const int worker_cpu = cpus[1];
  ThreadPoolOptions options;
  options.num_threads = 2;
  options.worker_affinities = {{worker_cpu}};
  ThreadPool pool(options);
  // Put the caller on the worker's processor (a new affinity moves a thread at once), then let
  // it run anywhere again, as a caller the scheduler left there.
  ASSERT_TRUE(SetCurrentThreadAffinity({worker_cpu}));
  ASSERT_EQ(sched_getcpu(), worker_cpu);
  ASSERT_TRUE(SetCurrentThreadAffinity(original));
  pool.WakeWorkers();
  EXPECT_NE(sched_getcpu(), worker_cpu);
  EXPECT_EQ(GetThreadAffinity(CurrentThreadId()), original);
}

TEST(ThreadPoolWake, MovesAnAutoPinnedWorkerOffTheCallersProcessor) {
  const std::vector<int> cpus = AvailableProcessors();
  if (cpus.size() < 2) GTEST_SKIP() << "needs two processors";
  const std::vector<int> original = GetThreadAffinity(CurrentThreadId());
  ThreadPoolOptions options;
  options.num_threads = 2;
  options.worker_affinities = {{cpus[1]}};
  options.affinities_required = false;  // pins the pool's owner chose: the worker may move
  ThreadPool pool(options);
  // Tried again should a busy machine's scheduler move the caller off the worker's processor
  // between the affinity calls and WakeWorkers (then there is nothing to separate).
  const int worker_tid = pool.WorkerThreadIds()[0];
  for (int attempt = 0; attempt < 20 && GetThreadAffinity(worker_tid) == std::vector<int>{cpus[1]}; ++attempt) {
    ASSERT_TRUE(SetCurrentThreadAffinity({cpus[1]}));
    ASSERT_TRUE(SetCurrentThreadAffinity(original));
    pool.WakeWorkers();
  }
  EXPECT_EQ(GetThreadAffinity(CurrentThreadId()), original);
  const std::vector<int> worker = GetThreadAffinity(worker_tid);
  EXPECT_EQ(worker, std::vector<int>{cpus[0]});  // the caller's lowest processor no worker held
  std::vector<std::atomic<int>> hits(256);
  pool.ParallelFor(256, 1e6, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
  });
  for (const auto& h : hits) ASSERT_EQ(h.load(), 1);
}

}  // namespace
}  // namespace onyx
