#include "platform/thread_pool.h"

#include <algorithm>
#include <exception>

#include "platform/cpu_features.h"

namespace onyx {

// Below this many estimated cycles a loop is not worth splitting.
constexpr double kMinParallelCost = 40000.0;

struct ThreadPool::Job {
  const RangeFn* fn = nullptr;
  int64_t n = 0;
  int64_t chunk = 1;
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> pending_chunks{0};
  std::mutex done_mutex;
  std::condition_variable done;
  std::exception_ptr error;
  std::mutex error_mutex;
};

ThreadPool::ThreadPool(int num_threads) {
  if (num_threads <= 0) num_threads = GetCpuFeatures().physical_cores;
  num_threads_ = std::max(1, num_threads);
  for (int i = 1; i < num_threads_; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

bool ThreadPool::RunOneChunk(Job& job) {
  const int64_t begin = job.next.fetch_add(job.chunk);
  if (begin >= job.n) return false;
  const int64_t end = std::min(job.n, begin + job.chunk);
  try {
    (*job.fn)(begin, end);
  } catch (...) {
    std::lock_guard<std::mutex> lock(job.error_mutex);
    if (!job.error) job.error = std::current_exception();
  }
  if (job.pending_chunks.fetch_sub(1) == 1) {
    std::lock_guard<std::mutex> lock(job.done_mutex);
    job.done.notify_all();
  }
  return true;
}

void ThreadPool::WorkerLoop() {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
      if (stopping_ && jobs_.empty()) return;
      job = jobs_.front();
      // A job whose chunks are all handed out leaves the queue.
      if (job->next.load() >= job->n) {
        jobs_.pop_front();
        continue;
      }
    }
    while (RunOneChunk(*job)) {
    }
  }
}

void ThreadPool::ParallelFor(int64_t n, double cost_per_item, const RangeFn& fn) {
  if (n <= 0) return;
  const double total = static_cast<double>(n) * std::max(cost_per_item, 1.0);
  int64_t max_parts = std::min<int64_t>(n, static_cast<int64_t>(total / kMinParallelCost));
  if (num_threads_ == 1 || max_parts < 2) {
    fn(0, n);
    return;
  }
  // A few chunks per thread balance uneven work without much overhead.
  const int64_t parts = std::min<int64_t>(max_parts, int64_t{num_threads_} * 4);
  auto job = std::make_shared<Job>();
  job->fn = &fn;
  job->n = n;
  job->chunk = (n + parts - 1) / parts;
  job->pending_chunks = (n + job->chunk - 1) / job->chunk;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back(job);
  }
  wake_.notify_all();
  while (RunOneChunk(*job)) {
  }
  {
    std::unique_lock<std::mutex> lock(job->done_mutex);
    job->done.wait(lock, [&] { return job->pending_chunks.load() == 0; });
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = std::find(jobs_.begin(), jobs_.end(), job);
    if (it != jobs_.end()) jobs_.erase(it);
  }
  if (job->error) std::rethrow_exception(job->error);
}

void ThreadPool::For(ThreadPool* pool, int64_t n, double cost_per_item, const RangeFn& fn) {
  if (pool == nullptr) {
    if (n > 0) fn(0, n);
    return;
  }
  pool->ParallelFor(n, cost_per_item, fn);
}

}  // namespace onyx
