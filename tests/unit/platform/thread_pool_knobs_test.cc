// The thread pool's ONNX Runtime knobs, each checked by its effect as the OS sees it: thread
// counts, affinities and CPU time from /proc, block partitions from what the loop body saw.
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "onyx/error.h"
#include "platform/thread_affinity.h"
#include "platform/thread_pool.h"
#include "thread_test_util.h"

namespace onyx {
namespace {

using namespace std::chrono_literals;

int Gettid() { return static_cast<int>(syscall(SYS_gettid)); }

TEST(ThreadPoolKnobs, ZeroThreadsMeansOnePerPhysicalCoreAndTheCallerIsOne) {
  const int cores = test::PhysicalCoresFromSysfs();
  const int before = test::SettledThreadCount();
  {
    ThreadPool pool(0);
    EXPECT_EQ(pool.num_threads(), cores);
    EXPECT_EQ(test::ProcessThreadCount(), before + cores - 1);  // N threads = N-1 workers
  }
  {
    ThreadPool pool(3);
    EXPECT_EQ(test::ProcessThreadCount(), before + 2);
    // The caller works too: a loop of slow items is seen by 3 distinct threads, the caller among them.
    std::mutex m;
    std::set<std::thread::id> ids;
    pool.ParallelFor(12, 1e9, [&](int64_t, int64_t) {
      std::this_thread::sleep_for(5ms);
      std::lock_guard<std::mutex> lock(m);
      ids.insert(std::this_thread::get_id());
    });
    EXPECT_EQ(ids.size(), 3u);
    EXPECT_EQ(ids.count(std::this_thread::get_id()), 1u);
  }
  EXPECT_EQ(test::WaitForThreadCount(before), before);
}

TEST(ThreadPoolKnobs, SmallLoopsStayOnTheCallingThread) {
  ThreadPool pool(4);
  for (double cost : {1.0, 100.0}) {
    std::set<std::thread::id> ids;
    int calls = 0;
    pool.ParallelFor(300, cost, [&](int64_t b, int64_t e) {
      ids.insert(std::this_thread::get_id());  // one thread, so no lock needed
      ++calls;
      EXPECT_EQ(b, 0);
      EXPECT_EQ(e, 300);
    });
    EXPECT_EQ(calls, 1) << "cost " << cost;
    EXPECT_EQ(*ids.begin(), std::this_thread::get_id());
  }
}

TEST(ThreadPoolKnobs, AffinityTextFollowsOnnxRuntimeFormat) {
  const std::vector<int> available = AvailableProcessors();
  ASSERT_FALSE(available.empty());
  const int a = available.front() + 1, b = available.back() + 1;  // 1-based, as ORT writes them
  const std::string text = std::to_string(a) + ";" + std::to_string(a) + "," + std::to_string(b) + "; " +
                           std::to_string(a) + "-" + std::to_string(b);
  const auto parsed = ParseThreadAffinities(text);
  ASSERT_EQ(parsed.size(), 3u);
  EXPECT_EQ(parsed[0], (std::vector<int>{a - 1}));
  EXPECT_EQ(parsed[1].front(), a - 1);
  EXPECT_EQ(parsed[1].back(), b - 1);
  std::vector<int> range;
  for (int p : available)
    if (p >= a - 1 && p <= b - 1) range.push_back(p);
  EXPECT_EQ(parsed[2], range);

  auto error_of = [](const std::string& t) {
    try {
      ParseThreadAffinities(t);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      return std::string(e.what());
    }
    ADD_FAILURE() << "no error for '" << t << "'";
    return std::string();
  };
  EXPECT_NE(error_of("0").find("count from 1"), std::string::npos);
  EXPECT_NE(error_of("x").find("not a processor id"), std::string::npos);
  EXPECT_NE(error_of("1;;1").find("empty entry"), std::string::npos);
  EXPECT_NE(error_of("2-1").find("reversed"), std::string::npos);
  EXPECT_NE(error_of("99999").find("not available"), std::string::npos);
}

TEST(ThreadPoolKnobs, WorkersArePinnedWhereTheAffinitiesSay) {
  const std::vector<int> available = AvailableProcessors();
  ThreadPoolOptions options;
  options.num_threads = 3;
  options.worker_affinities = {{available.back()}, {available.front()}};
  ThreadPool pool(options);
  const std::vector<int> tids = pool.WorkerThreadIds();
  ASSERT_EQ(tids.size(), 2u);
  EXPECT_EQ(test::AffinityOf(tids[0]), (std::vector<int>{available.back()}));
  EXPECT_EQ(test::AffinityOf(tids[1]), (std::vector<int>{available.front()}));
  // The calling thread is not pinned.
  EXPECT_EQ(test::AffinityOf(Gettid()), available);

  // num_threads 0 with affinities: one worker per entry.
  ThreadPoolOptions inferred;
  inferred.worker_affinities = {{available.front()}};
  EXPECT_EQ(ThreadPool(inferred).num_threads(), 2);

  ThreadPoolOptions wrong_count;
  wrong_count.num_threads = 4;
  wrong_count.worker_affinities = {{available.front()}};
  try {
    ThreadPool bad(wrong_count);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("one entry per worker"), std::string::npos) << e.what();
  }
}

TEST(ThreadPoolKnobs, ARefusedPinFailsThePoolUnlessAffinitiesAreOptional) {
  const std::vector<int> available = AvailableProcessors();
  const int missing = available.back() + 1;  // a processor this process may not run on
  if (missing >= 1024) GTEST_SKIP() << "no processor id outside the allowed set fits a cpu_set_t";
  ThreadPoolOptions options;
  options.num_threads = 2;
  options.worker_affinities = {{missing}};
  try {
    ThreadPool bad(options);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("refused to pin worker 0"), std::string::npos) << e.what();
  }
  options.affinities_required = false;
  ThreadPool pool(options);
  std::atomic<int64_t> sum{0};
  pool.ParallelFor(1000, 1e5, [&](int64_t b, int64_t e) { sum += e - b; });
  EXPECT_EQ(sum.load(), 1000);
  EXPECT_EQ(test::AffinityOf(pool.WorkerThreadIds()[0]), available);  // left where the OS put it
}

// Small parallel loops with 20 us gaps, as the ops of one Run come, until `done` or 3 s.
// Each loop has two 50 us blocks, so a worker that is awake takes one.
void BackToBackLoops(ThreadPool& pool, int min_count, const std::function<bool()>& done) {
  auto busy = [](std::chrono::microseconds us) {
    const auto until = std::chrono::steady_clock::now() + us;
    while (std::chrono::steady_clock::now() < until) {
    }
  };
  const auto deadline = std::chrono::steady_clock::now() + 3s;
  for (int i = 0; i < min_count || (!done() && std::chrono::steady_clock::now() < deadline); ++i) {
    pool.ParallelFor(2, 1e6, [&](int64_t, int64_t) { busy(50us); });
    busy(20us);
  }
}

TEST(ThreadPoolKnobs, SpinningWorkersCatchBackToBackLoopsWithoutSleeping) {
  // On a busy machine a worker may not be scheduled for a while, so loop until it shows.
  ThreadPoolOptions spin;
  spin.num_threads = 2;
  ThreadPool spinning(spin);
  BackToBackLoops(spinning, 100, [&] { return spinning.stats().found_work_spinning > 0; });
  EXPECT_GT(spinning.stats().found_work_spinning, 0u);

  ThreadPoolOptions no_spin = spin;
  no_spin.allow_spinning = false;
  ThreadPool blocking(no_spin);
  BackToBackLoops(blocking, 300, [] { return true; });
  EXPECT_EQ(blocking.stats().found_work_spinning, 0u);
  EXPECT_GT(blocking.stats().sleeps, 0u);
}

TEST(ThreadPoolKnobs, SpinningIsBoundedThenWorkersSleep) {
  for (bool allow : {true, false}) {
    ThreadPoolOptions options;
    options.num_threads = 3;
    options.allow_spinning = allow;
    ThreadPool pool(options);
    std::atomic<int64_t> sum{0};
    pool.ParallelFor(1000, 1e5, [&](int64_t b, int64_t e) { sum += e - b; });
    ASSERT_EQ(sum.load(), 1000);
    const auto tids = pool.WorkerThreadIds();
    std::vector<int64_t> at0, at50, at250;
    for (int t : tids) at0.push_back(test::ThreadCpuNanos(t));
    std::this_thread::sleep_for(50ms);
    for (int t : tids) at50.push_back(test::ThreadCpuNanos(t));
    std::this_thread::sleep_for(200ms);
    for (int t : tids) at250.push_back(test::ThreadCpuNanos(t));
    for (size_t i = 0; i < tids.size(); ++i) {
      ASSERT_GE(at0[i], 0) << "cannot read /proc/self/task/" << tids[i] << "/schedstat";
      // Spinning lasts spin_nanos (250 us), far below 20 ms even with scheduling slack.
      EXPECT_LT(at50[i] - at0[i], 20'000'000) << "worker " << i << " spinning=" << allow;
      // Then it sleeps: no CPU at all over 200 ms.
      EXPECT_LT(at250[i] - at50[i], 1'000'000) << "worker " << i << " spinning=" << allow;
    }
  }
}

// Block sizes ORT's dynamic_block_base gives: each claim takes max(1, remaining / (threads * d)).
std::vector<int64_t> ExpectedDynamicBlocks(int64_t n, int threads, int d) {
  std::vector<int64_t> sizes;
  for (int64_t remaining = n; remaining > 0;) {
    const int64_t size = std::max<int64_t>(1, remaining / (int64_t{threads} * d));
    sizes.push_back(size);
    remaining -= size;
  }
  return sizes;
}

TEST(ThreadPoolKnobs, DynamicBlockBaseShrinksBlocksAndKeepsResults) {
  constexpr int64_t kN = 10000;
  for (int d : {0, 1, 4}) {
    ThreadPoolOptions options;
    options.num_threads = 2;
    options.dynamic_block_base = d;
    ThreadPool pool(options);
    std::mutex m;
    std::vector<int64_t> sizes;
    std::vector<std::atomic<int>> hits(kN);
    pool.ParallelFor(kN, 1e4, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) ++hits[i];
      std::lock_guard<std::mutex> lock(m);
      sizes.push_back(e - b);
    });
    for (int64_t i = 0; i < kN; ++i) ASSERT_EQ(hits[i].load(), 1) << "index " << i << " d=" << d;
    std::sort(sizes.rbegin(), sizes.rend());
    if (d == 0) {
      // Fixed blocks: four per thread.
      EXPECT_EQ(sizes, std::vector<int64_t>(8, kN / 8));
    } else {
      std::vector<int64_t> expected = ExpectedDynamicBlocks(kN, 2, d);
      std::sort(expected.rbegin(), expected.rend());
      EXPECT_EQ(sizes, expected) << "d=" << d;
      EXPECT_EQ(sizes.front(), kN / (2 * d));
    }
  }
}

TEST(ThreadPoolKnobs, DynamicBlocksPropagateExceptions) {
  ThreadPoolOptions options;
  options.num_threads = 2;
  options.dynamic_block_base = 2;
  ThreadPool pool(options);
  EXPECT_THROW(pool.ParallelFor(1000, 1e6,
                                [](int64_t b, int64_t) {
                                  if (b > 500) throw Error(ErrorCode::kRuntime, "boom");
                                }),
               Error);
  // The pool still works after a failed loop.
  std::atomic<int64_t> sum{0};
  pool.ParallelFor(1000, 1e6, [&](int64_t b, int64_t e) { sum += e - b; });
  EXPECT_EQ(sum.load(), 1000);
}

// Custom thread hooks: threads made by the test, joined by the test.
struct HookLog {
  std::mutex mutex;
  int created = 0;
  int joined = 0;
  std::set<int> tids;  // Linux ids of the threads the hook started
};
HookLog g_hook_log;

CustomThreadHandle CreateHook(void* options, ThreadWorkerFn fn, void* param) {
  auto* log = static_cast<HookLog*>(options);
  auto* thread = new std::thread([log, fn, param] {
    {
      std::lock_guard<std::mutex> lock(log->mutex);
      log->tids.insert(Gettid());
    }
    fn(param);
  });
  std::lock_guard<std::mutex> lock(log->mutex);
  ++log->created;
  return thread;
}

void JoinHook(CustomThreadHandle handle) {
  auto* thread = static_cast<std::thread*>(const_cast<void*>(handle));
  thread->join();
  delete thread;
  std::lock_guard<std::mutex> lock(g_hook_log.mutex);
  ++g_hook_log.joined;
}

TEST(ThreadPoolKnobs, CustomThreadHooksStartAndJoinEveryWorker) {
  {
    std::lock_guard<std::mutex> lock(g_hook_log.mutex);
    g_hook_log.created = g_hook_log.joined = 0;
    g_hook_log.tids.clear();
  }
  {
    ThreadPoolOptions options;
    options.num_threads = 4;
    options.custom_create_thread_fn = &CreateHook;
    options.custom_thread_creation_options = &g_hook_log;
    options.custom_join_thread_fn = &JoinHook;
    ThreadPool pool(options);
    EXPECT_EQ(g_hook_log.created, 3);
    const auto tids = pool.WorkerThreadIds();
    EXPECT_EQ(std::set<int>(tids.begin(), tids.end()), g_hook_log.tids);
    // The loop runs on the hooked threads (and the caller).
    std::mutex m;
    std::set<int> seen;
    pool.ParallelFor(16, 1e9, [&](int64_t, int64_t) {
      std::this_thread::sleep_for(3ms);
      std::lock_guard<std::mutex> lock(m);
      seen.insert(Gettid());
    });
    seen.erase(Gettid());
    for (int tid : seen) EXPECT_EQ(g_hook_log.tids.count(tid), 1u) << tid;
    EXPECT_FALSE(seen.empty());
    EXPECT_EQ(g_hook_log.joined, 0);
  }
  EXPECT_EQ(g_hook_log.joined, 3);

  ThreadPoolOptions half;
  half.num_threads = 2;
  half.custom_create_thread_fn = &CreateHook;
  EXPECT_THROW(ThreadPool bad(half), Error);
}

TEST(ThreadPoolKnobs, NestedLoopsFromWorkersFinish) {
  ThreadPool pool(3);
  std::atomic<int64_t> total{0};
  pool.ParallelFor(6, 1e9, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) pool.ParallelFor(1000, 1e4, [&](int64_t ib, int64_t ie) { total += ie - ib; });
  });
  EXPECT_EQ(total.load(), 6000);
}

}  // namespace
}  // namespace onyx
