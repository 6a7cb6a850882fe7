// A pool of worker threads for data-parallel loops inside one kernel (intra-op parallelism)
// and for the lanes of the parallel executor (inter-op).
// The thread that calls ParallelFor works too, so a pool of N threads starts N-1 workers.
// Several threads may call ParallelFor at once (concurrent Runs share the session's pool), and
// a loop body may itself call ParallelFor.
// Idle workers spin for a short, bounded time (pause instructions and yields) when spinning is
// allowed, so back-to-back loops skip the wake-up latency, then sleep: an idle pool costs no CPU.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <type_traits>
#include <vector>

#include "onyx/threading.h"

namespace onyx {

struct ThreadPoolOptions {
  // Threads counting the caller; 0 = one per physical core, or one per affinity entry plus the
  // caller when worker_affinities is set.
  int num_threads = 0;
  // Idle workers (and a caller waiting for its loop to finish) spin up to spin_nanos before
  // sleeping; without spinning they sleep at once. 2 ms covers the gaps between a model's
  // parallel loops (a sleeping worker on a VM takes 0.1-1 ms to wake: MobileNetV2 at 2 threads
  // measured 4.0 ms with 0.25 ms of spinning, 3.7 ms with 2 ms) and still leaves an idle
  // session at 0% CPU well within 10 ms.
  bool allow_spinning = true;
  int64_t spin_nanos = 2'000'000;
  // ONNX Runtime's dynamic_block_base: 0 = fixed blocks; d > 0 = each claim takes
  // max(1, remaining / (num_threads * d)) items, so blocks shrink as the loop drains.
  int dynamic_block_base = 0;
  // 0-based processors for each worker (num_threads - 1 entries); empty = no pinning.
  std::vector<std::vector<int>> worker_affinities;
  // A worker the OS refuses to pin fails the pool's construction; false keeps it unpinned (for
  // affinities the pool's owner chose itself rather than the user).
  bool affinities_required = true;
  // Start workers through these hooks instead of std::thread (both or neither).
  CustomCreateThreadFn custom_create_thread_fn = nullptr;
  void* custom_thread_creation_options = nullptr;
  CustomJoinThreadFn custom_join_thread_fn = nullptr;
};

class ThreadPool {
 public:
  // num_threads counts the caller; 0 means one per physical core.
  explicit ThreadPool(int num_threads);
  // Throws Error(kInvalidArgument) for inconsistent options and Error(kRuntime) when a thread
  // cannot be started or pinned. Returns once workers pinned as required (affinities_required)
  // run; others may still be starting (a loop queued meanwhile is theirs to join when they do).
  explicit ThreadPool(const ThreadPoolOptions& options);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }
  const ThreadPoolOptions& options() const;

  using RangeFn = std::function<void(int64_t begin, int64_t end)>;
  // Runs fn over [0, n) split into ranges. cost_per_item is a rough cycle count for one item;
  // loops whose total cost is too small to repay waking threads run on the caller alone. A loop
  // that is split first separates its caller from a pinned worker's processor, as WakeWorkers.
  void ParallelFor(int64_t n, double cost_per_item, const RangeFn& fn);

  // As above, but tolerates a null pool (runs inline).
  static void For(ThreadPool* pool, int64_t n, double cost_per_item, const RangeFn& fn);
  // The same for any callable, passed on by reference: a lambda with more than two captures
  // made a std::function allocate on every call (per-node overhead of small kernels).
  template <typename Fn, typename = std::enable_if_t<!std::is_same_v<std::decay_t<Fn>, RangeFn>>>
  static void For(ThreadPool* pool, int64_t n, double cost_per_item, Fn&& fn) {
    if (pool == nullptr) {
      if (n > 0) fn(int64_t{0}, n);
      return;
    }
    const RangeFn by_reference = std::ref(fn);
    pool->ParallelFor(n, cost_per_item, by_reference);
  }

  // Called where a burst of loops is about to start (a Run). A caller on a pinned worker's
  // processor is separated from it (the worker moves to a free processor when the pool's owner
  // chose the pins, affinities_required false; else the caller moves, its affinity left as it
  // was), and sleeping
  // workers so they spin (up to spin_nanos) for the next loop: a worker's wake-up (0.1-1 ms on
  // a VM after an idle gap) overlaps the caller's setup instead of stretching the first loop.
  // The wake is skipped without spinning (a woken worker would only sleep again).
  void WakeWorkers();

  // Linux thread ids of the workers, in worker order (to read their CPU time or affinity).
  std::vector<int> WorkerThreadIds() const;

  // How idle workers found their next loop: while spinning (no wake-up needed) or after sleeping.
  struct Stats {
    uint64_t found_work_spinning = 0;
    uint64_t sleeps = 0;
  };
  Stats stats() const;

 private:
  struct Impl;
  int num_threads_ = 1;
  std::unique_ptr<Impl> impl_;
};

}  // namespace onyx
