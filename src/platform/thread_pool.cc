#include "platform/thread_pool.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "base/check.h"
#include "platform/cpu_features.h"
#include "platform/thread_affinity.h"

namespace onyx {
namespace {

// Below this many estimated cycles a loop is not worth splitting.
constexpr double kMinParallelCost = 40000.0;
// Fixed blocks per thread: a few balance uneven work without much overhead.
constexpr int64_t kBlocksPerThread = 4;

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

int64_t MonotonicNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Spins until done() holds or spin_nanos pass; returns done(). Every few microseconds (64
// pauses) it reads the clock and yields: on an idle core the yield returns at once, but when
// cores are oversubscribed it hands the core to a runnable thread, often the one about to post
// work (spinning without yields made bert_tiny at 2 threads 2-3x slower on a busy 2-core VM).
template <typename Pred>
bool SpinUntil(int64_t spin_nanos, Pred done) {
  const int64_t deadline = MonotonicNanos() + spin_nanos;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      CpuRelax();
    }
    if (MonotonicNanos() >= deadline) return done();
    sched_yield();
  }
}

// A lane's blocks still to run, [front, back): front in the low 32 bits, back in the high.
struct alignas(64) Lane {
  std::atomic<uint64_t> range{0};
};

inline uint64_t LaneRange(int64_t front, int64_t back) {
  return static_cast<uint64_t>(front) | (static_cast<uint64_t>(back) << 32);
}
inline int64_t LaneFront(uint64_t range) { return static_cast<int64_t>(range & 0xFFFFFFFFu); }
inline int64_t LaneBack(uint64_t range) { return static_cast<int64_t>(range >> 32); }

// One ParallelFor call. Threads claim blocks of [0, n); the caller waits until done_items
// reaches n. Fixed blocks are dealt out in lanes, one per thread: lane 0 is the caller's and
// lane w + 1 worker w's. A thread runs its own lane front to back, then takes the others' blocks
// from their backs. So a thread gets the same part of every loop split alike, and a chain of
// such loops (a CNN's convs, split by pixels) finds its input in its own core's cache: with one
// shared counter the blocks fell to the threads by timing, and about half of every input came
// from the other core (costly when the two cores sit far apart: MobileNetV2 int8 at 2 threads
// ran slower than at 1 on the 2-core VM while its cores' round trip read 350 ns, not 60).
struct Job {
  const ThreadPool::RangeFn* fn = nullptr;
  int64_t n = 0;
  int64_t block = 0;            // fixed block size; 0 = dynamic blocks
  int64_t dynamic_divisor = 1;  // num_threads * dynamic_block_base
  std::atomic<int64_t> next{0};  // dynamic blocks: the first item not claimed
  int num_lanes = 0;             // fixed blocks
  std::unique_ptr<Lane[]> lanes;
  std::atomic<int64_t> done_items{0};
  std::atomic<bool> failed{false};
  std::mutex error_mutex;
  std::exception_ptr error;
  std::mutex done_mutex;
  std::condition_variable done;

  // Fixed blocks of `block` items, dealt to min(threads, blocks) lanes as evenly as they go.
  void DealBlocks(int threads) {
    const int64_t blocks = (n + block - 1) / block;
    num_lanes = static_cast<int>(std::min<int64_t>(threads, blocks));
    lanes = std::make_unique<Lane[]>(static_cast<size_t>(num_lanes));
    for (int l = 0; l < num_lanes; ++l)
      lanes[l].range.store(LaneRange(blocks * l / num_lanes, blocks * (l + 1) / num_lanes), std::memory_order_relaxed);
  }

  bool Exhausted() const {
    if (block == 0) return next.load(std::memory_order_relaxed) >= n;
    for (int l = 0; l < num_lanes; ++l) {
      const uint64_t r = lanes[l].range.load(std::memory_order_relaxed);
      if (LaneFront(r) < LaneBack(r)) return false;
    }
    return true;
  }
  bool Finished() const { return done_items.load(std::memory_order_acquire) == n; }

  // The next fixed block for the thread of lane `own`: its own lane's front, else another's back.
  bool ClaimBlock(int own, int64_t* index) {
    if (own < num_lanes) {
      std::atomic<uint64_t>& range = lanes[own].range;
      uint64_t r = range.load(std::memory_order_relaxed);
      while (LaneFront(r) < LaneBack(r)) {
        if (range.compare_exchange_weak(r, r + 1, std::memory_order_relaxed)) {
          *index = LaneFront(r);
          return true;
        }
      }
    }
    for (int k = 1; k <= num_lanes; ++k) {
      std::atomic<uint64_t>& range = lanes[(own + k) % num_lanes].range;
      uint64_t r = range.load(std::memory_order_relaxed);
      while (LaneFront(r) < LaneBack(r)) {
        if (range.compare_exchange_weak(r, r - (uint64_t{1} << 32), std::memory_order_relaxed)) {
          *index = LaneBack(r) - 1;
          return true;
        }
      }
    }
    return false;
  }

  // Claims and runs one block; false when none is left. lane: the calling thread's.
  bool RunOneBlock(int lane) {
    int64_t begin, end;
    if (block > 0) {
      int64_t index;
      if (!ClaimBlock(lane, &index)) return false;
      begin = index * block;
      end = std::min(n, begin + block);
    } else {
      begin = next.load(std::memory_order_relaxed);
      int64_t size;
      do {
        if (begin >= n) return false;
        size = std::max<int64_t>(1, (n - begin) / dynamic_divisor);
      } while (!next.compare_exchange_weak(begin, begin + size, std::memory_order_relaxed));
      end = begin + size;
    }
    // After a failure the remaining blocks are claimed but skipped.
    if (!failed.load(std::memory_order_relaxed)) {
      try {
        (*fn)(begin, end);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        failed.store(true, std::memory_order_relaxed);
      }
    }
    if (done_items.fetch_add(end - begin, std::memory_order_acq_rel) + (end - begin) == n) {
      std::lock_guard<std::mutex> lock(done_mutex);
      done.notify_all();
    }
    return true;
  }
};

}  // namespace

struct ThreadPool::Impl {
  struct Worker {
    Impl* impl = nullptr;
    int index = 0;
    std::atomic<int> tid{0};  // set by the worker once it runs (and pinned itself); read by repins
    std::thread thread;
    CustomThreadHandle handle = nullptr;
  };

  ThreadPoolOptions options;
  int num_threads = 1;

  std::mutex mutex;
  std::condition_variable wake;
  std::deque<std::shared_ptr<Job>> jobs;  // guarded by mutex
  int sleepers = 0;                       // guarded by mutex
  bool stopping = false;                  // guarded by mutex
  std::atomic<bool> stop_flag{false};
  // Bumped whenever a job is queued (and at shutdown): what idle workers watch.
  std::atomic<uint64_t> epoch{0};

  std::vector<std::unique_ptr<Worker>> workers;
  std::mutex start_mutex;
  std::condition_variable started;
  size_t num_started = 0;   // guarded by start_mutex
  std::string start_error;  // guarded by start_mutex

  std::atomic<uint64_t> found_work_spinning{0};
  std::atomic<uint64_t> sleeps{0};

  // Each pinned worker's processors (empty when none is pinned); changed only under
  // repin_mutex, after construction only for auto_pinned.
  std::vector<std::vector<int>> worker_pins;
  std::mutex repin_mutex;
  // Pinned by the pool's owner for spread (affinities_required false), not by the user: a
  // worker may then move to another processor the caller may use.
  bool auto_pinned = false;

  bool WorkerHolds(int cpu) const {
    for (const auto& cpus : worker_pins)
      if (std::find(cpus.begin(), cpus.end(), cpu) != cpus.end()) return true;
    return false;
  }

  // A caller found on a pinned worker's processor shares it no longer: the scheduler wakes a
  // thread where it last ran, and there it would time-share one processor with the worker it
  // waits for while another one idles (until a load balance, milliseconds: EfficientNet-B0 at
  // 2 threads in a process whose caller sat on the worker's processor ran no faster than at 1
  // thread, the worker taking part in 38% of the loops). An auto-pinned worker moves to a
  // processor the caller may use and no worker holds (a sleeping worker moves for ~1 us); else
  // the caller moves, its affinity narrowed and put back at once (~50 us on this VM).
  // Cheap when nothing is to be done (a processor number read, an uncontended try_lock): it
  // runs before every parallel loop too, as the scheduler may put the caller on the worker's
  // processor in mid-Run (when another process takes the caller's: the loops then ran no faster
  // than on one thread until the Run's end; MobileNetV2, 2 threads, loaded machine: 7.1 ms
  // median in those Runs against 4.1).
  void SeparateCallerFromWorkers() {
#if defined(__linux__)
    if (worker_pins.empty() || tls_worker_of == this) return;  // (the pins' count never changes)
    const int cpu = sched_getcpu();
    if (cpu < 0) return;
    std::unique_lock<std::mutex> lock(repin_mutex, std::try_to_lock);
    if (!lock.owns_lock() || !WorkerHolds(cpu)) return;  // another thread is at it
    cpu_set_t mask;
    CPU_ZERO(&mask);
    if (sched_getaffinity(0, sizeof(mask), &mask) != 0) return;
    cpu_set_t others = mask;
    for (const auto& cpus : worker_pins)
      for (int c : cpus)
        if (c >= 0 && c < CPU_SETSIZE) CPU_CLR(c, &others);
    if (CPU_COUNT(&others) == 0) return;  // the caller may run nowhere else
    if (auto_pinned) {
      int target = 0;
      while (target < CPU_SETSIZE && !CPU_ISSET(target, &others)) ++target;
      for (size_t i = 0; i < worker_pins.size(); ++i) {
        if (worker_pins[i] != std::vector<int>{cpu}) continue;
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(target, &one);
        // A worker not yet running pins itself to worker_pins[i] when it starts.
        const int tid = workers[i]->tid;
        if (tid > 0 && sched_setaffinity(tid, sizeof(one), &one) != 0) break;
        worker_pins[i] = {target};
        return;
      }
    }
    if (sched_setaffinity(0, sizeof(others), &others) == 0) sched_setaffinity(0, sizeof(mask), &mask);
#endif
  }

  // The pool a worker thread belongs to: its nested loops are not a caller to separate.
  static thread_local const Impl* tls_worker_of;
  // That worker's lane in the pool's loops (its index + 1).
  static thread_local int tls_lane;

  static void WorkerEntry(void* arg) {
    auto* w = static_cast<Worker*>(arg);
    Impl& impl = *w->impl;
    tls_worker_of = &impl;
    tls_lane = w->index + 1;
    bool pinned = true;
    {  // the pin as it is now: a repin may have come before this worker ran
      std::lock_guard<std::mutex> lock(impl.repin_mutex);
      if (!impl.worker_pins.empty()) pinned = SetCurrentThreadAffinity(impl.worker_pins[static_cast<size_t>(w->index)]);
      w->tid = CurrentThreadId();
    }
    {
      std::lock_guard<std::mutex> lock(impl.start_mutex);
      ++impl.num_started;
      if (!pinned && impl.options.affinities_required && impl.start_error.empty())
        impl.start_error = StrCat("the OS refused to pin worker ", w->index, " to its processors");
    }
    impl.started.notify_all();
    impl.WorkerLoop();
  }

  // The first queued job with blocks left; drops exhausted jobs from the front.
  std::shared_ptr<Job> TakeJob() {
    std::lock_guard<std::mutex> lock(mutex);
    while (!jobs.empty()) {
      if (!jobs.front()->Exhausted()) return jobs.front();
      jobs.pop_front();
    }
    return nullptr;
  }

  void WorkerLoop() {
    // No spinning before the first job: a worker just started has no loop gap to bridge, and
    // its spin on the creating thread's processor (an auto-pin can put it there) took that
    // thread's time while the session was still being created (2-thread creation-cache hits of
    // ~1 ms took ~4.5 in one process of four on the busy 2-core VM).
    bool worked = false;
    for (;;) {
      // Read the epoch before looking for work: a job queued after the look changes it.
      const uint64_t seen = epoch.load(std::memory_order_acquire);
      if (std::shared_ptr<Job> job = TakeJob()) {
        worked = true;
        while (job->RunOneBlock(tls_lane)) {
        }
        continue;
      }
      if (stop_flag.load(std::memory_order_acquire)) return;
      auto changed = [&] { return epoch.load(std::memory_order_acquire) != seen; };
      if (worked && options.allow_spinning && options.spin_nanos > 0 && SpinUntil(options.spin_nanos, changed)) {
        found_work_spinning.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      std::unique_lock<std::mutex> lock(mutex);
      if (stopping) return;
      if (changed()) continue;
      ++sleepers;
      sleeps.fetch_add(1, std::memory_order_relaxed);
      wake.wait(lock, [&] { return stopping || changed(); });
      --sleepers;
      if (stopping && jobs.empty()) return;
    }
  }

  void StopAndJoin() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
      stop_flag.store(true, std::memory_order_release);
      epoch.fetch_add(1, std::memory_order_release);
    }
    wake.notify_all();
    for (auto& w : workers) {
      if (options.custom_join_thread_fn != nullptr) {
        if (w->handle != nullptr) options.custom_join_thread_fn(w->handle);
      } else if (w->thread.joinable()) {
        w->thread.join();
      }
    }
    workers.clear();
  }
};

thread_local const ThreadPool::Impl* ThreadPool::Impl::tls_worker_of = nullptr;
thread_local int ThreadPool::Impl::tls_lane = 0;

ThreadPool::ThreadPool(int num_threads)
    : ThreadPool([num_threads] {
        ThreadPoolOptions options;
        options.num_threads = std::max(0, num_threads);
        return options;
      }()) {}

ThreadPool::ThreadPool(const ThreadPoolOptions& options) : impl_(std::make_unique<Impl>()) {
  ONYX_CHECK(options.num_threads >= 0, kInvalidArgument, "thread pool: num_threads must be >= 0, got ",
             options.num_threads);
  ONYX_CHECK(options.dynamic_block_base >= 0, kInvalidArgument, "thread pool: dynamic_block_base must be >= 0, got ",
             options.dynamic_block_base);
  ONYX_CHECK(options.spin_nanos >= 0, kInvalidArgument, "thread pool: spin_nanos must be >= 0");
  ONYX_CHECK((options.custom_create_thread_fn == nullptr) == (options.custom_join_thread_fn == nullptr),
             kInvalidArgument, "custom_create_thread_fn and custom_join_thread_fn go together: set both or neither");
  const auto& affinities = options.worker_affinities;
  int n = options.num_threads;
  if (n == 0) n = affinities.empty() ? GetCpuFeatures().physical_cores : static_cast<int>(affinities.size()) + 1;
  n = std::max(1, n);
  ONYX_CHECK(affinities.empty() || affinities.size() == static_cast<size_t>(n - 1), kInvalidArgument,
             "thread affinities give ", affinities.size(), " entries but the pool of ", n, " threads has ", n - 1,
             " workers (the calling thread is not pinned): give one entry per worker");
  for (size_t i = 0; i < affinities.size(); ++i)
    ONYX_CHECK(!affinities[i].empty(), kInvalidArgument, "thread affinity of worker ", i, " names no processor");
  num_threads_ = n;
  Impl& impl = *impl_;
  impl.options = options;
  impl.options.num_threads = n;
  impl.worker_pins = affinities;
  impl.auto_pinned = !affinities.empty() && !options.affinities_required;

  std::string error;
  for (int i = 0; i + 1 < n; ++i) {
    auto w = std::make_unique<Impl::Worker>();
    w->impl = &impl;
    w->index = i;
    if (options.custom_create_thread_fn != nullptr) {
      w->handle = options.custom_create_thread_fn(options.custom_thread_creation_options, &Impl::WorkerEntry, w.get());
      if (w->handle == nullptr) {
        error = StrCat("custom_create_thread_fn returned no thread for worker ", i);
        break;
      }
    } else {
      try {
        w->thread = std::thread(&Impl::WorkerEntry, w.get());
      } catch (const std::system_error& e) {
        error = StrCat("cannot start worker thread ", i, ": ", e.what());
        break;
      }
    }
    impl.workers.push_back(std::move(w));
  }
  // Workers pinned as required (the user's pins) are waited for, so a refused affinity fails the
  // construction. Others, auto-pinned ones too (a refused pin leaves them where they are), start
  // while the caller goes on (waiting cost a session's creation 2-17 ms on a busy VM, a 2-thread
  // creation-cache hit 3-4 ms of its ~1.5): a loop queued before a worker runs is picked up when
  // it does, or done by the caller alone; a worker not yet running is not repinned (tid 0).
  if ((!options.worker_affinities.empty() && options.affinities_required) || !error.empty()) {
    std::unique_lock<std::mutex> lock(impl.start_mutex);
    impl.started.wait(lock, [&] { return impl.num_started == impl.workers.size(); });
    if (error.empty()) error = impl.start_error;
  }
  if (!error.empty()) {
    impl.StopAndJoin();
    ONYX_THROW(kRuntime, "thread pool: ", error);
  }
}

ThreadPool::~ThreadPool() { impl_->StopAndJoin(); }

const ThreadPoolOptions& ThreadPool::options() const { return impl_->options; }

std::vector<int> ThreadPool::WorkerThreadIds() const {
  {  // a worker's id is known once it runs
    std::unique_lock<std::mutex> lock(impl_->start_mutex);
    impl_->started.wait(lock, [&] { return impl_->num_started == impl_->workers.size(); });
  }
  std::vector<int> ids;
  for (const auto& w : impl_->workers) ids.push_back(w->tid);
  return ids;
}

ThreadPool::Stats ThreadPool::stats() const {
  Stats s;
  s.found_work_spinning = impl_->found_work_spinning.load(std::memory_order_relaxed);
  s.sleeps = impl_->sleeps.load(std::memory_order_relaxed);
  return s;
}

void ThreadPool::WakeWorkers() {
  Impl& impl = *impl_;
  impl.SeparateCallerFromWorkers();
  if (num_threads_ == 1 || !impl.options.allow_spinning || impl.options.spin_nanos == 0) return;
  {
    std::lock_guard<std::mutex> lock(impl.mutex);
    if (impl.sleepers == 0) return;
    // A new epoch with no job: a woken worker finds nothing and spins for the next one.
    impl.epoch.fetch_add(1, std::memory_order_release);
  }
  impl.wake.notify_all();
}

void ThreadPool::ParallelFor(int64_t n, double cost_per_item, const RangeFn& fn) {
  if (n <= 0) return;
  const double total = static_cast<double>(n) * std::max(cost_per_item, 1.0);
  const int64_t max_parts = std::min<int64_t>(n, static_cast<int64_t>(std::min(total / kMinParallelCost, 1e18)));
  if (num_threads_ == 1 || max_parts < 2) {
    fn(0, n);
    return;
  }
  Impl& impl = *impl_;
  impl.SeparateCallerFromWorkers();
  auto job = std::make_shared<Job>();
  job->fn = &fn;
  job->n = n;
  int64_t helpers = num_threads_ - 1;
  if (impl.options.dynamic_block_base > 0) {
    job->block = 0;
    job->dynamic_divisor = int64_t{num_threads_} * impl.options.dynamic_block_base;
  } else {
    const int64_t threads = num_threads_;
    int64_t parts = std::min<int64_t>(max_parts, threads * kBlocksPerThread);
    // When those blocks come out unequal, the most equal ones, from two to eight per thread (each
    // still worth a hand-off), if such a count divides n: 10 heavy items on 2 threads one per
    // block (5 each, where blocks of 2 gave 6 against 4), 36 in 12 blocks of 3 (not 7 of 5 and
    // one of 1, which gave 20 against 16).
    const int64_t most = n % parts == 0 ? 0 : std::min<int64_t>(max_parts, 2 * threads * kBlocksPerThread);
    for (int64_t p = most - most % threads; p >= 2 * threads; p -= threads) {
      if (n % p == 0) {
        parts = p;
        break;
      }
    }
    job->block = (n + parts - 1) / parts;
    job->DealBlocks(num_threads_);
    helpers = std::min(helpers, (n + job->block - 1) / job->block - 1);
  }
  int to_wake = 0;
  {
    std::lock_guard<std::mutex> lock(impl.mutex);
    impl.jobs.push_back(job);
    impl.epoch.fetch_add(1, std::memory_order_release);
    to_wake = static_cast<int>(std::min<int64_t>(impl.sleepers, helpers));
  }
  for (int i = 0; i < to_wake; ++i) impl.wake.notify_one();

  // A worker's nested loop keeps its lane; any other caller takes lane 0.
  const int lane = Impl::tls_worker_of == &impl ? Impl::tls_lane : 0;
  while (job->RunOneBlock(lane)) {
  }
  if (!job->Finished()) {
    const bool spun = impl.options.allow_spinning && impl.options.spin_nanos > 0 &&
                      SpinUntil(impl.options.spin_nanos, [&] { return job->Finished(); });
    if (!spun) {
      std::unique_lock<std::mutex> lock(job->done_mutex);
      job->done.wait(lock, [&] { return job->Finished(); });
    }
  }
  {
    std::lock_guard<std::mutex> lock(impl.mutex);
    auto it = std::find(impl.jobs.begin(), impl.jobs.end(), job);
    if (it != impl.jobs.end()) impl.jobs.erase(it);
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
