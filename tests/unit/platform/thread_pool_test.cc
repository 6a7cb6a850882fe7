#include "platform/thread_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "onyx/error.h"

namespace onyx {
namespace {

TEST(ThreadPool, CoversEveryIndexOnce) {
  ThreadPool pool(3);
  std::vector<std::atomic<int>> hits(10000);
  pool.ParallelFor(10000, 1e5, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) ++hits[i];
  });
  for (auto& h : hits) EXPECT_EQ(h.load(), 1);
}

TEST(ThreadPool, ExpensiveLoopsUseSeveralThreadsCheapOnesOne) {
  ThreadPool pool(2);
  auto threads_used = [&](double cost) {
    std::mutex m;
    std::set<std::thread::id> ids;
    pool.ParallelFor(64, cost, [&](int64_t, int64_t) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      std::lock_guard<std::mutex> lock(m);
      ids.insert(std::this_thread::get_id());
    });
    return ids.size();
  };
  EXPECT_EQ(threads_used(1.0), 1u);  // total cost far below the split threshold
  EXPECT_EQ(threads_used(1e7), 2u);
}

// Four blocks per thread; when those would be unequal and a count of two to eight per thread
// divides n, the most such equal blocks.
TEST(ThreadPool, EqualBlocksWhenThreadsDivideTheLoop) {
  const auto block_sizes = [](int threads, int64_t n) {
    ThreadPool pool(threads);
    std::mutex m;
    std::vector<int64_t> sizes;
    pool.ParallelFor(n, 1e7, [&](int64_t b, int64_t e) {
      std::lock_guard<std::mutex> lock(m);
      sizes.push_back(e - b);
    });
    std::sort(sizes.begin(), sizes.end());
    return sizes;
  };
  EXPECT_EQ(block_sizes(2, 36), std::vector<int64_t>(12, 3));
  EXPECT_EQ(block_sizes(2, 10), std::vector<int64_t>(10, 1));
  EXPECT_EQ(block_sizes(2, 20), std::vector<int64_t>(10, 2));
  EXPECT_EQ(block_sizes(3, 30), std::vector<int64_t>(15, 2));
  EXPECT_EQ(block_sizes(2, 64), std::vector<int64_t>(8, 8));
  EXPECT_EQ(block_sizes(2, 22), std::vector<int64_t>({1, 3, 3, 3, 3, 3, 3, 3}));  // 22: no 4..16 divides it
  EXPECT_EQ(block_sizes(2, 9), std::vector<int64_t>({1, 2, 2, 2, 2}));  // odd: no equal split
}

TEST(ThreadPool, PropagatesExceptions) {
  ThreadPool pool(2);
  EXPECT_THROW(pool.ParallelFor(100, 1e6,
                                [](int64_t b, int64_t) {
                                  if (b > 0) throw Error(ErrorCode::kRuntime, "boom");
                                }),
               Error);
}

TEST(ThreadPool, ConcurrentCallersShareThePool) {
  ThreadPool pool(2);
  std::atomic<int64_t> total{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c)
    callers.emplace_back([&] {
      for (int r = 0; r < 50; ++r)
        pool.ParallelFor(1000, 1e4, [&](int64_t b, int64_t e) { total += e - b; });
    });
  for (auto& t : callers) t.join();
  EXPECT_EQ(total.load(), 4 * 50 * 1000);
}

// Workers that take long to come up do not hold up the pool's construction: a loop run at once
// is done by the caller (and by a worker once it runs), WorkerThreadIds waits for their ids, and
// the destructor joins them even before they started.
std::atomic<int> g_slow_started{0};
CustomThreadHandle SlowCreate(void*, ThreadWorkerFn fn, void* param) {
  return new std::thread([fn, param] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ++g_slow_started;
    fn(param);
  });
}
void SlowJoin(CustomThreadHandle handle) {
  auto* thread = static_cast<std::thread*>(const_cast<void*>(handle));
  thread->join();
  delete thread;
}

TEST(ThreadPool, ConstructionDoesNotWaitForWorkersToStart) {
  ThreadPoolOptions options;
  options.num_threads = 3;
  options.custom_create_thread_fn = &SlowCreate;
  options.custom_join_thread_fn = &SlowJoin;
  g_slow_started = 0;
  {
    const auto start = std::chrono::steady_clock::now();
    ThreadPool pool(options);
    std::vector<std::atomic<int>> hits(1000);
    pool.ParallelFor(1000, 1e6, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
    });
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(ms, 250.0);  // the workers sleep 300 ms before they run
    EXPECT_EQ(g_slow_started.load(), 0);
    for (const auto& h : hits) ASSERT_EQ(h.load(), 1);
    const std::vector<int> ids = pool.WorkerThreadIds();  // waits for both workers
    EXPECT_EQ(g_slow_started.load(), 2);
    ASSERT_EQ(ids.size(), 2u);
    EXPECT_GT(ids[0], 0);
    EXPECT_GT(ids[1], 0);
  }
  {
    ThreadPool unstarted(options);  // destroyed before its workers run: they start, see the stop, end
  }
}

}  // namespace
}  // namespace onyx
