// A session's intra-op pool pins its workers itself (affinities_required false) when it spans
// every processor: such workers no longer hold up the pool's construction (a 2-thread
// creation-cache hit waited 3-4 ms on a busy VM for its worker to be scheduled), while pins the
// user asked for are still waited for, so a refused one fails the construction. A worker does not
// spin before its first job (its spin could take the creating thread's processor).
#include <gtest/gtest.h>
#include <sched.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "platform/thread_pool.h"

namespace onyx {
namespace {

std::atomic<int> g_started{0};
CustomThreadHandle SlowCreate(void*, ThreadWorkerFn fn, void* param) {
  return new std::thread([fn, param] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ++g_started;
    fn(param);
  });
}
void SlowJoin(CustomThreadHandle handle) {
  auto* thread = static_cast<std::thread*>(const_cast<void*>(handle));
  thread->join();
  delete thread;
}

int SomeAllowedCpu() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof(mask), &mask) != 0) return 0;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &mask)) return c;
  return 0;
}

double ConstructMs(bool required, std::vector<int>* ids) {
  ThreadPoolOptions options;
  options.num_threads = 2;
  options.worker_affinities = {{SomeAllowedCpu()}};
  options.affinities_required = required;
  options.custom_create_thread_fn = &SlowCreate;
  options.custom_join_thread_fn = &SlowJoin;
  g_started = 0;
  const auto start = std::chrono::steady_clock::now();
  ThreadPool pool(options);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::vector<std::atomic<int>> hits(1000);
  pool.ParallelFor(1000, 1e6, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
  });
  for (const auto& h : hits) EXPECT_EQ(h.load(), 1);
  pool.WakeWorkers();  // may look for the worker to move: one not yet running is left alone
  *ids = pool.WorkerThreadIds();  // waits for the worker
  return ms;
}

TEST(AutoPinnedPool, ConstructionDoesNotWaitForItsWorkers) {
  std::vector<int> ids;
  EXPECT_LT(ConstructMs(/*required=*/false, &ids), 250.0);  // the worker sleeps 300 ms first
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_GT(ids[0], 0);
  EXPECT_EQ(g_started.load(), 1);
}

TEST(AutoPinnedPool, UserPinsAreStillWaitedFor) {
  std::vector<int> ids;
  EXPECT_GE(ConstructMs(/*required=*/true, &ids), 290.0);
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_GT(ids[0], 0);
}

// CPU time of thread `tid` of this process (the kernel's per-thread CPU clock).
double ThreadCpuMs(int tid) {
  const clockid_t clock = (~static_cast<clockid_t>(tid) << 3) | 6;  // CPUCLOCK_SCHED | per-thread
  timespec ts{};
  if (clock_gettime(clock, &ts) != 0) return -1.0;
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

TEST(AutoPinnedPool, NewWorkerDoesNotSpinBeforeItsFirstJob) {
  ThreadPoolOptions options;
  options.num_threads = 2;
  options.allow_spinning = true;
  options.spin_nanos = 100'000'000;  // a spinning worker would burn most of the 150 ms below
  ThreadPool pool(options);
  const std::vector<int> ids = pool.WorkerThreadIds();
  ASSERT_EQ(ids.size(), 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  const double idle_ms = ThreadCpuMs(ids[0]);
  ASSERT_GE(idle_ms, 0.0);
  EXPECT_LT(idle_ms, 10.0);
  // After a job it spins as before (the loop gaps of a Run).
  std::atomic<int64_t> total{0};
  pool.ParallelFor(1000, 1e6, [&](int64_t b, int64_t e) { total += e - b; });
  EXPECT_EQ(total.load(), 1000);
}

}  // namespace
}  // namespace onyx
