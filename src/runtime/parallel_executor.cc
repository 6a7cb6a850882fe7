#include "runtime/parallel_executor.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>

#include "base/check.h"
#include "platform/thread_pool.h"

namespace onyx {
namespace {

// A lane runs for the whole graph: tell ParallelFor to give every lane its own thread.
constexpr double kLaneCost = 1e12;

struct RunStateOfGraph {
  std::mutex mutex;
  std::condition_variable cv;
  std::deque<int> ready;
  std::vector<int> pending;  // predecessors not finished yet, per step
  int remaining = 0;         // steps not finished
  int running = 0;
  int idle_lanes = 0;
  bool failed = false;
};

// Takes ready steps until the graph is done or a step failed. After a step, the lane goes on
// with one of the steps it made ready (its output is still in cache) and queues the others.
void Lane(RunStateOfGraph& st, const StepGraph& graph, const std::function<void(int)>& run_step) {
  std::unique_lock<std::mutex> lock(st.mutex);
  int step = -1;
  for (;;) {
    if (step < 0) {
      while (st.ready.empty() && st.remaining > 0 && !st.failed) {
        if (st.running == 0) {
          st.failed = true;
          st.cv.notify_all();
          ONYX_THROW(kRuntime, "parallel executor: ", st.remaining, " steps wait on each other and can never start");
        }
        ++st.idle_lanes;
        st.cv.wait(lock);
        --st.idle_lanes;
      }
      if (st.failed || st.remaining == 0) return;
      step = st.ready.front();
      st.ready.pop_front();
    }
    ++st.running;
    lock.unlock();
    try {
      run_step(step);
    } catch (...) {
      lock.lock();
      --st.running;
      st.failed = true;
      st.cv.notify_all();
      throw;
    }
    lock.lock();
    --st.running;
    --st.remaining;
    int next = -1;
    for (int s : graph.successors[static_cast<size_t>(step)]) {
      if (--st.pending[static_cast<size_t>(s)] != 0) continue;
      if (next < 0) {
        next = s;
      } else {
        st.ready.push_back(s);
      }
    }
    if (st.remaining == 0 || st.failed) {
      st.cv.notify_all();
    } else {
      const size_t wake = std::min<size_t>(static_cast<size_t>(st.idle_lanes), st.ready.size());
      for (size_t i = 0; i < wake; ++i) st.cv.notify_one();
    }
    if (st.failed) return;
    step = next;
  }
}

}  // namespace

StepGraph StepGraph::FromPredecessors(const std::vector<std::vector<int>>& predecessors) {
  StepGraph g;
  const size_t n = predecessors.size();
  g.successors.resize(n);
  g.num_predecessors.assign(n, 0);
  std::vector<int> depth(n, 0);
  for (size_t i = 0; i < n; ++i) {
    std::vector<int> preds = predecessors[i];
    std::sort(preds.begin(), preds.end());
    preds.erase(std::unique(preds.begin(), preds.end()), preds.end());
    for (int p : preds) {
      ONYX_CHECK(p >= 0 && static_cast<size_t>(p) < i, kInvalidModel, "step ", i, " depends on step ", p,
                 ", which does not come before it");
      g.successors[static_cast<size_t>(p)].push_back(static_cast<int>(i));
      ++g.num_predecessors[i];
      depth[i] = std::max(depth[i], depth[static_cast<size_t>(p)] + 1);
    }
  }
  std::vector<int> per_depth(n + 1, 0);
  for (int d : depth) g.width = std::max(g.width, ++per_depth[static_cast<size_t>(d)]);
  return g;
}

void RunStepGraph(ThreadPool* pool, const StepGraph& graph, const std::function<void(int)>& run_step) {
  const int n = static_cast<int>(graph.successors.size());
  if (n == 0) return;
  const int lanes = pool == nullptr ? 1 : std::min(pool->num_threads(), graph.width);
  if (lanes <= 1) {
    // Predecessors come first, so plain order is a valid schedule.
    for (int i = 0; i < n; ++i) run_step(i);
    return;
  }
  RunStateOfGraph st;
  st.pending = graph.num_predecessors;
  st.remaining = n;
  for (int i = 0; i < n; ++i)
    if (st.pending[static_cast<size_t>(i)] == 0) st.ready.push_back(i);
  pool->ParallelFor(lanes, kLaneCost, [&](int64_t begin, int64_t end) {
    for (int64_t lane = begin; lane < end; ++lane) Lane(st, graph, run_step);
  });
}

}  // namespace onyx
