// The dependency scheduler of the parallel executor, on its own: order, concurrency, errors.
#include "runtime/parallel_executor.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <random>
#include <thread>

#include "onyx/error.h"
#include "platform/thread_pool.h"

namespace onyx {
namespace {

using namespace std::chrono_literals;

TEST(StepGraph, WidthCountsIndependentSteps) {
  // 0 -> {1, 2} -> 3: a diamond is two wide.
  StepGraph diamond = StepGraph::FromPredecessors({{}, {0}, {0}, {1, 2, 1}});
  EXPECT_EQ(diamond.width, 2);
  EXPECT_EQ(diamond.num_predecessors, (std::vector<int>{0, 1, 1, 2}));  // duplicates count once
  EXPECT_EQ(diamond.successors[0], (std::vector<int>{1, 2}));
  EXPECT_EQ(StepGraph::FromPredecessors({{}, {0}, {1}, {2}}).width, 1);  // a chain
  EXPECT_EQ(StepGraph::FromPredecessors({{}, {}, {}, {0, 1, 2}}).width, 3);
  EXPECT_THROW(StepGraph::FromPredecessors({{1}, {}}), Error);  // not in topological order
}

TEST(RunStepGraph, EveryStepRunsOnceAfterItsPredecessors) {
  std::mt19937 rng(7);
  constexpr int kSteps = 300;
  std::vector<std::vector<int>> preds(kSteps);
  for (int i = 1; i < kSteps; ++i) {
    const int count = static_cast<int>(rng() % 3);
    for (int k = 0; k < count; ++k) preds[i].push_back(static_cast<int>(rng() % i));
  }
  const StepGraph graph = StepGraph::FromPredecessors(preds);
  ASSERT_GT(graph.width, 1);
  ThreadPool pool(3);
  for (int round = 0; round < 20; ++round) {
    std::vector<std::atomic<int>> finished(kSteps);
    std::atomic<int> violations{0};
    RunStepGraph(&pool, graph, [&](int step) {
      for (int p : preds[step])
        if (finished[p].load() != 1) ++violations;
      ++finished[step];
    });
    EXPECT_EQ(violations.load(), 0);
    for (int i = 0; i < kSteps; ++i) ASSERT_EQ(finished[i].load(), 1) << "step " << i;
  }
}

TEST(RunStepGraph, IndependentStepsRunAtTheSameTime) {
  // Steps 1 and 2 each wait (up to 10 s) for the other to start: they finish quickly only if
  // two threads run them at once.
  const StepGraph graph = StepGraph::FromPredecessors({{}, {0}, {0}, {1, 2}});
  ThreadPool pool(2);
  std::mutex m;
  std::condition_variable cv;
  int started = 0;
  bool met = true;
  const auto t0 = std::chrono::steady_clock::now();
  RunStepGraph(&pool, graph, [&](int step) {
    if (step != 1 && step != 2) return;
    std::unique_lock<std::mutex> lock(m);
    ++started;
    cv.notify_all();
    if (!cv.wait_for(lock, 10s, [&] { return started == 2; })) met = false;
  });
  EXPECT_TRUE(met);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
}

TEST(RunStepGraph, OneLaneRunsInPlainOrder) {
  const StepGraph graph = StepGraph::FromPredecessors({{}, {}, {0, 1}, {}});
  ThreadPool pool(1);
  std::vector<int> order;
  RunStepGraph(&pool, graph, [&](int step) { order.push_back(step); });
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
  order.clear();
  RunStepGraph(nullptr, graph, [&](int step) { order.push_back(step); });
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
}

TEST(RunStepGraph, AFailingStepStopsTheRestAndIsRethrown) {
  // 0 -> 1 -> 2 and 0 -> 3 -> 4: step 1 fails, so step 2 must never start.
  const StepGraph graph = StepGraph::FromPredecessors({{}, {0}, {1}, {0}, {3}});
  ThreadPool pool(2);
  for (int round = 0; round < 20; ++round) {
    std::atomic<bool> ran_after_failure{false};
    try {
      RunStepGraph(&pool, graph, [&](int step) {
        if (step == 1) throw Error(ErrorCode::kRuntime, "step one broke");
        if (step == 2) ran_after_failure = true;
      });
      FAIL() << "expected the error";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), "step one broke");
    }
    EXPECT_FALSE(ran_after_failure.load());
  }
}

}  // namespace
}  // namespace onyx
