// A pool of worker threads for data-parallel loops inside one kernel (intra-op parallelism).
// The thread that calls ParallelFor works too, so a pool of N threads starts N-1 workers.
// Several threads may call ParallelFor at once (concurrent Runs share the session's pool).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace onyx {

class ThreadPool {
 public:
  // num_threads counts the caller; 0 means one per physical core.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }

  using RangeFn = std::function<void(int64_t begin, int64_t end)>;
  // Runs fn over [0, n) split into ranges. cost_per_item is a rough cycle count for one item;
  // loops whose total cost is too small to repay waking threads run on the caller alone.
  void ParallelFor(int64_t n, double cost_per_item, const RangeFn& fn);

  // As above, but tolerates a null pool (runs inline).
  static void For(ThreadPool* pool, int64_t n, double cost_per_item, const RangeFn& fn);

 private:
  struct Job;
  void WorkerLoop();
  static bool RunOneChunk(Job& job);

  int num_threads_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Job>> jobs_;
  bool stopping_ = false;
};

}  // namespace onyx
