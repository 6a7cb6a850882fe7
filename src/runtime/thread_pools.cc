#include "runtime/thread_pools.h"

#include <mutex>

#include "base/check.h"
#include "base/config_value.h"
#include "platform/cpu_features.h"
#include "platform/thread_affinity.h"

namespace onyx {
namespace {

std::mutex g_global_mutex;
SessionThreadPools g_global_pools;  // guarded by g_global_mutex

const std::string* Entry(const SessionOptions& options, const char* key) {
  auto it = options.config_entries.find(key);
  return it == options.config_entries.end() ? nullptr : &it->second;
}

int ParseDynamicBlockBase(const SessionOptions& options) {
  const std::string* value = Entry(options, kConfigDynamicBlockBase);
  if (value == nullptr) return 0;
  size_t used = 0;
  long long parsed = -1;
  try {
    parsed = std::stoll(*value, &used);
  } catch (...) {
    used = 0;
  }
  ONYX_CHECK(used == value->size() && parsed >= 0 && parsed <= (1 << 20), kInvalidArgument, "session config entry ",
             kConfigDynamicBlockBase, " must be an integer from 0 to 1048576, got '", *value, "'");
  return static_cast<int>(parsed);
}

std::vector<std::vector<int>> ParseAffinities(const std::string& text, const char* what) {
  try {
    return ParseThreadAffinities(text);
  } catch (const Error& e) {
    throw Error(e.code(), StrCat(what, ": ", e.what()));
  }
}

// Pool errors (wrong affinity count, threads that cannot start) name the option they came from.
std::shared_ptr<ThreadPool> MakePool(const ThreadPoolOptions& options, const char* what) {
  try {
    return std::make_shared<ThreadPool>(options);
  } catch (const Error& e) {
    throw Error(e.code(), StrCat(what, ": ", e.what()));
  }
}

// With no affinities given and a pool that uses every processor the process may run on, worker
// i is pinned to the (i + 1)-th of them and the calling thread stays free. Unpinned, a worker
// woken after the session sat idle is placed on its waker's processor and shares it for the
// first milliseconds (MobileNetV2 at 2 threads after 30 ms idle: 6.8-7.4 ms unpinned, 4.8-4.9
// pinned, 3.7-4.0 back to back). (ONNX Runtime 1.31 leaves its worker free on this 2-processor
// machine.) A caller that the scheduler puts back on the worker's processor is handled at each
// Run's start: ThreadPool::WakeWorkers moves the worker, these pins being Onyx's own choice.
std::vector<std::vector<int>> AutoAffinities(int num_threads) {
  const std::vector<int> cpus = AvailableProcessors();
  const int n = num_threads == 0 ? GetCpuFeatures().physical_cores : num_threads;
  if (n < 2 || static_cast<size_t>(n) != cpus.size()) return {};
  std::vector<std::vector<int>> affinities;
  for (int i = 1; i < n; ++i) affinities.push_back({cpus[static_cast<size_t>(i)]});
  return affinities;
}

}  // namespace

bool IsThreadingConfigKey(const std::string& key) {
  return key == kConfigIntraOpAllowSpinning || key == kConfigInterOpAllowSpinning ||
         key == kConfigIntraOpThreadAffinities || key == kConfigDynamicBlockBase;
}

SessionThreadPools CreateSessionThreadPools(const SessionOptions& options) {
  ONYX_CHECK(options.intra_op_num_threads >= 0, kInvalidArgument, "intra_op_num_threads must be >= 0, got ",
             options.intra_op_num_threads);
  ONYX_CHECK(options.inter_op_num_threads >= 0, kInvalidArgument, "inter_op_num_threads must be >= 0, got ",
             options.inter_op_num_threads);
  ONYX_CHECK(options.execution_mode == ExecutionMode::kSequential || options.execution_mode == ExecutionMode::kParallel,
             kInvalidArgument, "unknown execution_mode ", static_cast<int>(options.execution_mode));
  const bool parallel = options.execution_mode == ExecutionMode::kParallel;
  const bool hooks = options.custom_create_thread_fn != nullptr || options.custom_join_thread_fn != nullptr;

  if (options.use_global_thread_pool) {
    std::string conflict;
    if (options.intra_op_num_threads != 0) conflict = "intra_op_num_threads";
    if (options.inter_op_num_threads != 0) conflict = "inter_op_num_threads";
    if (hooks) conflict = "custom thread hooks";
    for (const auto& [key, value] : options.config_entries)
      if (IsThreadingConfigKey(key)) conflict = "config entry " + key;
    ONYX_CHECK(conflict.empty(), kInvalidArgument, "use_global_thread_pool is set, so the threads come from ",
               "SetGlobalThreadPools' ThreadingOptions; ", conflict, " cannot be set on the session too");
    std::lock_guard<std::mutex> lock(g_global_mutex);
    ONYX_CHECK(g_global_pools.intra_op != nullptr, kInvalidArgument,
               "use_global_thread_pool is set but there are no global thread pools: call SetGlobalThreadPools first");
    return {g_global_pools.intra_op, parallel ? g_global_pools.inter_op : nullptr};
  }

  ThreadPoolOptions intra;
  intra.num_threads = options.intra_op_num_threads;
  intra.allow_spinning = ConfigSwitch(options.config_entries, kConfigIntraOpAllowSpinning, true);
  intra.dynamic_block_base = ParseDynamicBlockBase(options);
  if (const std::string* text = Entry(options, kConfigIntraOpThreadAffinities))
    intra.worker_affinities = ParseAffinities(*text, kConfigIntraOpThreadAffinities);
  else if (options.custom_create_thread_fn == nullptr) {
    intra.worker_affinities = AutoAffinities(options.intra_op_num_threads);
    intra.affinities_required = false;  // a refused pin leaves the worker where the OS put it
  }
  intra.custom_create_thread_fn = options.custom_create_thread_fn;
  intra.custom_thread_creation_options = options.custom_thread_creation_options;
  intra.custom_join_thread_fn = options.custom_join_thread_fn;
  SessionThreadPools pools;
  pools.intra_op = MakePool(intra, "intra-op thread pool");
  const bool inter_spinning = ConfigSwitch(options.config_entries, kConfigInterOpAllowSpinning, true);
  if (parallel) {
    ThreadPoolOptions inter;
    inter.num_threads = options.inter_op_num_threads;
    inter.allow_spinning = inter_spinning;
    inter.custom_create_thread_fn = options.custom_create_thread_fn;
    inter.custom_thread_creation_options = options.custom_thread_creation_options;
    inter.custom_join_thread_fn = options.custom_join_thread_fn;
    pools.inter_op = MakePool(inter, "inter-op thread pool");
  }
  return pools;
}

void SetGlobalThreadPools(const ThreadingOptions& options) {
  ONYX_CHECK(options.intra_op_num_threads >= 0, kInvalidArgument,
             "ThreadingOptions.intra_op_num_threads must be >= 0, got ", options.intra_op_num_threads);
  ONYX_CHECK(options.inter_op_num_threads >= 0, kInvalidArgument,
             "ThreadingOptions.inter_op_num_threads must be >= 0, got ", options.inter_op_num_threads);
  ThreadPoolOptions intra;
  intra.num_threads = options.intra_op_num_threads;
  intra.allow_spinning = options.allow_spinning;
  if (!options.intra_op_thread_affinities.empty())
    intra.worker_affinities =
        ParseAffinities(options.intra_op_thread_affinities, "ThreadingOptions.intra_op_thread_affinities");
  intra.custom_create_thread_fn = options.custom_create_thread_fn;
  intra.custom_thread_creation_options = options.custom_thread_creation_options;
  intra.custom_join_thread_fn = options.custom_join_thread_fn;
  ThreadPoolOptions inter;
  inter.num_threads = options.inter_op_num_threads;
  inter.allow_spinning = options.allow_spinning;
  inter.custom_create_thread_fn = options.custom_create_thread_fn;
  inter.custom_thread_creation_options = options.custom_thread_creation_options;
  inter.custom_join_thread_fn = options.custom_join_thread_fn;
  SessionThreadPools pools;
  pools.intra_op = MakePool(intra, "global intra-op thread pool");
  pools.inter_op = MakePool(inter, "global inter-op thread pool");
  SessionThreadPools old;
  {
    std::lock_guard<std::mutex> lock(g_global_mutex);
    old = std::move(g_global_pools);
    g_global_pools = std::move(pools);
  }
  // `old` joins its threads here, outside the lock, unless sessions still hold it.
}

bool HasGlobalThreadPools() {
  std::lock_guard<std::mutex> lock(g_global_mutex);
  return g_global_pools.intra_op != nullptr;
}

void ReleaseGlobalThreadPools() {
  SessionThreadPools old;
  std::lock_guard<std::mutex> lock(g_global_mutex);
  old = std::move(g_global_pools);
  g_global_pools = {};
}

}  // namespace onyx
