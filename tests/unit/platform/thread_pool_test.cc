#include "platform/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>

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

}  // namespace
}  // namespace onyx
