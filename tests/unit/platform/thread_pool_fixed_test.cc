// ThreadPool::ParallelForFixed: every part runs exactly once, part i on the same thread in every
// call (part 0 on the caller), also with concurrent callers, nested calls, 1 thread, a null pool
// and exceptions; a part whose worker is busy elsewhere runs on the caller instead.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "onyx/error.h"
#include "platform/thread_pool.h"

namespace onyx {
namespace {

// Part 0 waits (up to 10 s) until the other parts have started: the caller takes over a part
// its worker has not started when part 0 is done, which a loaded machine could make happen.
struct StartedParts {
  std::atomic<int> started{0};
  void Run(int part, int parts) {
    if (part != 0) {
      ++started;
      return;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (started.load() < parts - 1 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  }
};

TEST(ThreadPoolFixed, EveryPartOnceOnTheSameThreadEveryCall) {
  ThreadPool pool(4);
  std::vector<std::thread::id> first(4);
  for (int call = 0; call < 200; ++call) {
    std::vector<std::atomic<int>> hits(4);
    std::vector<std::thread::id> ran(4);
    StartedParts sync;
    pool.ParallelForFixed(4, [&](int part) {
      sync.Run(part, 4);
      ++hits[static_cast<size_t>(part)];
      ran[static_cast<size_t>(part)] = std::this_thread::get_id();
    });
    for (int i = 0; i < 4; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "part " << i;
    ASSERT_EQ(ran[0], std::this_thread::get_id()) << "part 0 runs on the caller";
    if (call == 0) first = ran;
    for (int i = 0; i < 4; ++i) ASSERT_EQ(ran[static_cast<size_t>(i)], first[static_cast<size_t>(i)]) << "call " << call;
  }
  for (int i = 1; i < 4; ++i)
    for (int j = 0; j < i; ++j) EXPECT_NE(first[static_cast<size_t>(i)], first[static_cast<size_t>(j)]);
}

// Fewer parts than threads: the first workers take them, as in a full call.
TEST(ThreadPoolFixed, FewerPartsUseTheSameThreadsAsAFullCall) {
  ThreadPool pool(3);
  std::vector<std::thread::id> full(3), two(2);
  StartedParts sync3, sync2;
  pool.ParallelForFixed(3, [&](int part) {
    sync3.Run(part, 3);
    full[static_cast<size_t>(part)] = std::this_thread::get_id();
  });
  pool.ParallelForFixed(2, [&](int part) {
    sync2.Run(part, 2);
    two[static_cast<size_t>(part)] = std::this_thread::get_id();
  });
  EXPECT_EQ(two[0], full[0]);
  EXPECT_EQ(two[1], full[1]);
  EXPECT_THROW(pool.ParallelForFixed(4, [](int) {}), Error);
  pool.ParallelForFixed(0, [](int) { FAIL() << "no parts, no calls"; });
}

// Interleaved with ordinary loops, and from several callers at once (concurrent Runs share a
// session's pool): each caller runs its own part 0, worker i every call's part i.
TEST(ThreadPoolFixed, ConcurrentCallersAndOrdinaryLoops) {
  ThreadPool pool(3);
  std::vector<std::thread::id> workers(3);
  StartedParts first;
  pool.ParallelForFixed(3, [&](int part) {
    first.Run(part, 3);
    workers[static_cast<size_t>(part)] = std::this_thread::get_id();
  });
  std::atomic<int> wrong{0}, parts_run{0}, items{0};
  auto caller = [&] {
    for (int call = 0; call < 300; ++call) {
      const std::thread::id me = std::this_thread::get_id();
      StartedParts sync;
      pool.ParallelForFixed(3, [&](int part) {
        sync.Run(part, 3);
        const std::thread::id expect = part == 0 ? me : workers[static_cast<size_t>(part)];
        if (std::this_thread::get_id() != expect) ++wrong;
        ++parts_run;
      });
      pool.ParallelFor(64, 1e5, [&](int64_t b, int64_t e) { items += static_cast<int>(e - b); });
    }
  };
  std::vector<std::thread> callers;
  for (int i = 0; i < 3; ++i) callers.emplace_back(caller);
  for (auto& t : callers) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(parts_run.load(), 3 * 300 * 3);
  EXPECT_EQ(items.load(), 3 * 300 * 64);
}

// Inside a loop body of the same pool (fixed or not) the parts run inline, in order, on the
// body's thread: a worker waiting there for another worker's part could deadlock.
TEST(ThreadPoolFixed, NestedCallsRunInlineWithoutDeadlock) {
  ThreadPool pool(2);
  std::atomic<int> inline_parts{0}, other{0};
  auto nested = [&] {
    const std::thread::id me = std::this_thread::get_id();
    int expect = 0;
    pool.ParallelForFixed(2, [&](int part) {
      if (std::this_thread::get_id() == me && part == expect++) ++inline_parts;
      else ++other;
    });
  };
  for (int call = 0; call < 50; ++call) {
    pool.ParallelForFixed(2, [&](int) { nested(); });
    pool.ParallelFor(8, 1e7, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) nested();
    });
  }
  EXPECT_EQ(inline_parts.load(), 50 * (2 + 8) * 2);
  EXPECT_EQ(other.load(), 0);
}

// The worker held in another caller's loop: the caller runs its part instead of waiting.
TEST(ThreadPoolFixed, ACallerRunsThePartOfABusyWorker) {
  ThreadPool pool(2);
  std::atomic<bool> worker_in{false}, release{false};
  std::thread other([&] {
    const std::thread::id me = std::this_thread::get_id();
    pool.ParallelFor(2, 1e9, [&](int64_t, int64_t) {
      if (std::this_thread::get_id() == me) {  // leave the other block to the worker
        while (!worker_in.load()) std::this_thread::yield();
        return;
      }
      worker_in = true;
      while (!release.load()) std::this_thread::yield();
    });
  });
  while (!worker_in.load()) std::this_thread::yield();
  std::vector<std::thread::id> ran(2);
  pool.ParallelForFixed(2, [&](int part) { ran[static_cast<size_t>(part)] = std::this_thread::get_id(); });
  EXPECT_EQ(ran[0], std::this_thread::get_id());
  EXPECT_EQ(ran[1], std::this_thread::get_id());
  release = true;
  other.join();
}

TEST(ThreadPoolFixed, OneThreadAndNullPoolRunInOrderInline) {
  for (int pass = 0; pass < 2; ++pass) {
    ThreadPool one(1);
    ThreadPool* pool = pass == 0 ? &one : nullptr;
    std::vector<int> order;
    const std::thread::id me = std::this_thread::get_id();
    ThreadPool::ForFixed(pool, pass == 0 ? 1 : 3, [&](int part) {
      EXPECT_EQ(std::this_thread::get_id(), me);
      order.push_back(part);
    });
    EXPECT_EQ(order, pass == 0 ? std::vector<int>{0} : std::vector<int>({0, 1, 2}));
  }
}

TEST(ThreadPoolFixed, AnExceptionIsRethrownAfterEveryPartRan) {
  ThreadPool pool(3);
  for (int thrower = 0; thrower < 3; ++thrower) {
    std::atomic<int> ran{0};
    EXPECT_THROW(pool.ParallelForFixed(3,
                                       [&](int part) {
                                         ++ran;
                                         if (part == thrower) throw std::runtime_error("part failed");
                                       }),
                 std::runtime_error);
    EXPECT_EQ(ran.load(), 3);
  }
  int after = 0;  // the pool still works
  std::mutex m;
  pool.ParallelForFixed(3, [&](int) {
    std::lock_guard<std::mutex> lock(m);
    ++after;
  });
  EXPECT_EQ(after, 3);
}

}  // namespace
}  // namespace onyx
