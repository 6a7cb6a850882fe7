// A session's threading options with ONNX Runtime's names, each checked by its effect:
// parallel execution (speed, results against a scalar reference, errors, memory), the
// spinning / affinity / dynamic-block config entries, thread hooks and the global pools.
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "counting_allocator.h"
#include "branchy_model.h"
#include "model_builder.h"
#include "onnx/model_loader.h"
#include "onyx/session.h"
#include "platform/thread_affinity.h"
#include "platform/thread_pool.h"
#include "runtime/graph_plan.h"
#include "runtime/session_impl.h"
#include "thread_test_util.h"

namespace onyx {
namespace {

using test::BranchyModel;

using namespace std::chrono_literals;

Session MakeSession(const std::string& bytes, const SessionOptions& options) {
  return Session(bytes.data(), bytes.size(), options);
}

std::string ErrorText(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an error";
  return "";
}

TEST(ParallelExecution, MatchesAScalarReference) {
  const std::string bytes = BranchyModel();
  SessionOptions options;
  options.execution_mode = ExecutionMode::kParallel;
  options.inter_op_num_threads = 3;
  Session s = MakeSession(bytes, options);
  ASSERT_NE(s.impl().inter_op_thread_pool(), nullptr);
  EXPECT_EQ(s.impl().inter_op_thread_pool()->num_threads(), 3);
  EXPECT_GE(s.impl().plan().parallel_width(), 3);
  const Tensor x = test::FloatTensor({4, 3}, -5.5f, 1.0f);
  for (int run = 0; run < 50; ++run) {
    auto out = s.Run({{"x", x}});
    ASSERT_EQ(out.size(), 2u);
    for (int64_t i = 0; i < x.size(); ++i) {
      const float xv = x.data<float>()[i];
      const float relu = std::max(xv, 0.0f);
      const float w = 0.5f + static_cast<float>(i % 3);
      ASSERT_EQ(out[0].tensor().data<float>()[i], relu * -xv) << i;
      ASSERT_EQ(out[1].tensor().data<float>()[i], (xv + w) - relu) << i;
    }
  }
}

TEST(ParallelExecution, SequentialModeHasNoInterOpThreads) {
  const std::string bytes = BranchyModel();
  const int before = test::SettledThreadCount();
  SessionOptions options;
  options.intra_op_num_threads = 1;
  options.inter_op_num_threads = 4;  // unused in sequential mode
  Session s = MakeSession(bytes, options);
  EXPECT_EQ(s.impl().inter_op_thread_pool(), nullptr);
  EXPECT_EQ(test::ProcessThreadCount(), before);
  options.execution_mode = ExecutionMode::kParallel;
  Session p = MakeSession(bytes, options);
  EXPECT_EQ(test::ProcessThreadCount(), before + 3);  // inter_op_num_threads counts the caller
}

// Two independent branches of `depth` transcendental ops over n floats, joined at the end.
std::string TwoHeavyBranches(int64_t n, int depth) {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {n}).Output("y", DataType::kFloat, {n});
  std::string a = "x", c = "x";
  for (int i = 0; i < depth; ++i) {
    const std::string na = "a" + std::to_string(i), nc = "c" + std::to_string(i);
    b.Node(i % 2 ? "Cos" : "Sin", {a}, {na});
    b.Node(i % 2 ? "Sin" : "Cos", {c}, {nc});
    a = na;
    c = nc;
  }
  b.Node("Add", {a, c}, {"y"});
  return b.Bytes();
}

double BestMs(const Session& s, const NamedValues& feeds, int runs) {
  double best = 1e30;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    s.Run(feeds);
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

TEST(ParallelExecution, TwoHeavyBranchesRunFasterThanSequentialWithTheSameOutputs) {
  if (AvailableProcessors().size() < 2) GTEST_SKIP() << "needs two processors";
  constexpr int64_t kN = 1 << 20;
  const std::string bytes = TwoHeavyBranches(kN, 4);
  SessionOptions seq_options;
  seq_options.intra_op_num_threads = 1;
  SessionOptions par_options = seq_options;
  par_options.execution_mode = ExecutionMode::kParallel;
  par_options.inter_op_num_threads = 2;
  Session seq = MakeSession(bytes, seq_options);
  Session par = MakeSession(bytes, par_options);
  Tensor x(DataType::kFloat, {kN});
  for (int64_t i = 0; i < kN; ++i) x.data<float>()[i] = static_cast<float>(i % 1000) * 0.01f - 5.0f;
  const NamedValues feeds = {{"x", x}};

  // Same kernels on the same inputs: the outputs are bit-identical; spot-check a scalar reference.
  const Tensor ys = seq.Run(feeds)[0].tensor();
  const Tensor yp = par.Run(feeds)[0].tensor();
  ASSERT_EQ(ys.size(), kN);
  EXPECT_EQ(std::memcmp(ys.data<float>(), yp.data<float>(), kN * sizeof(float)), 0);
  for (int64_t i : {int64_t{0}, int64_t{777}, kN - 1}) {
    double a = x.data<float>()[i], c = a;
    for (int d = 0; d < 4; ++d) {
      a = d % 2 ? std::cos(a) : std::sin(a);
      c = d % 2 ? std::sin(c) : std::cos(c);
    }
    EXPECT_NEAR(yp.data<float>()[i], a + c, 1e-5) << i;
  }

  // The inter-op worker ran one of the branches: it used a fair share of the CPU time.
  const auto workers = par.impl().inter_op_thread_pool()->WorkerThreadIds();
  ASSERT_EQ(workers.size(), 1u);
  const int64_t worker_cpu0 = test::ThreadCpuNanos(workers[0]);
  const int64_t process_cpu0 = test::ProcessCpuNanos();
  for (int r = 0; r < 4; ++r) par.Run(feeds);
  const double process_cpu = static_cast<double>(test::ProcessCpuNanos() - process_cpu0);
  const double worker_cpu = static_cast<double>(test::ThreadCpuNanos(workers[0]) - worker_cpu0);

  // A speed-up needs two cores. A shared machine may not give them to this process (other
  // work, or Linux's autogroup scheduling sharing the CPUs per login session): measure what two
  // plain spinning threads get first, and skip the timing when it is under 1.6 cores.
  const double cores = test::CoresAvailable(2);
  if (cores < 1.6) GTEST_SKIP() << "two spinning threads got only " << cores << " cores: timing skipped";
  // Checked in the sanitize build too: there the lane that had run the AVX-512 Add ran its next
  // branch 8x slower while kernels left the vector registers' upper halves dirty (-O1 without
  // vzeroupper, docs/threading.md; linalg/vector_upper_state_test.cc), and this share fell to 5%.
  EXPECT_GT(worker_cpu, 0.25 * process_cpu)
      << "the inter-op worker used " << worker_cpu / 1e6 << " of " << process_cpu / 1e6 << " ms";
  // Best of several alternating runs, retried a few times.
  double seq_ms = 0, par_ms = 0;
  for (int attempt = 0; attempt < 4; ++attempt) {
    seq_ms = BestMs(seq, feeds, 3);
    par_ms = BestMs(par, feeds, 3);
    seq_ms = std::min(seq_ms, BestMs(seq, feeds, 2));
    if (par_ms < 0.8 * seq_ms) break;
  }
  std::printf("two heavy branches: sequential %.1f ms, parallel %.1f ms (%.2f cores available)\n", seq_ms, par_ms,
              cores);
  EXPECT_LT(par_ms, 0.8 * seq_ms) << "parallel " << par_ms << " ms vs sequential " << seq_ms << " ms";
}

TEST(ParallelExecution, ErrorsNameTheNodeAndTheSessionStaysUsable) {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {-1, -1});
  b.Output("y1", DataType::kFloat, {-1, -1}).Output("y2", DataType::kFloat, {-1, -1});
  b.Initializer("w", test::FloatTensor({3}));
  b.Node("Add", {"x", "w"}, {"y1"}).name = "bad_add";
  b.Node("Sin", {"x"}, {"s"});
  b.Node("Cos", {"s"}, {"y2"});
  const std::string bytes = b.Bytes();
  SessionOptions options;
  options.execution_mode = ExecutionMode::kParallel;
  options.inter_op_num_threads = 2;
  Session s = MakeSession(bytes, options);
  for (int round = 0; round < 10; ++round) {
    const std::string what = ErrorText([&] { s.Run({{"x", test::FloatTensor({2, 4})}}); });
    EXPECT_NE(what.find("bad_add"), std::string::npos) << what;
    EXPECT_NE(what.find("float[2,4]"), std::string::npos) << what;
  }
  auto out = s.Run({{"x", test::FloatTensor({2, 3})}});
  EXPECT_EQ(out[0].tensor().data<float>()[4], 4.0f + 1.0f);
}

using test::CountingAllocator;

TEST(ParallelExecution, ReleasesValuesAfterTheirLastReader) {
  // Two chains of 8 Adds over 1 MiB tensors: without release 16 buffers would be alive at the
  // end; with it each chain holds at most two at a time.
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {256, 1024});
  b.Output("p8", DataType::kFloat, {256, 1024}).Output("q8", DataType::kFloat, {256, 1024});
  for (const char* chain : {"p", "q"}) {
    std::string prev = "x";
    for (int i = 1; i <= 8; ++i) {
      const std::string out = chain + std::to_string(i);
      b.Node("Add", {prev, prev}, {out});
      prev = out;
    }
  }
  const std::string bytes = b.Bytes();
  auto model = LoadModelFromBytes(bytes.data(), bytes.size());
  auto cpu = MakeCpuProvider();
  GraphPlan::BuildContext ctx;
  ctx.providers = {cpu.get()};
  auto plan = GraphPlan::Build(*model->graph, ctx);
  EXPECT_EQ(plan->parallel_width(), 2);
  ThreadPool inter(2);
  CountingAllocator counting;
  RunState run;
  run.allocator = &counting;
  run.inter_op_pool = &inter;
  const size_t one = 256 * 1024 * sizeof(float);
  auto outputs = plan->Execute(run, {Value(test::FloatTensor({256, 1024}, 1.0f, 0.0f))}, nullptr);
  EXPECT_LE(counting.peak(), 4 * one) << "peak " << counting.peak() << " bytes";
  EXPECT_EQ(outputs[0].tensor().data<float>()[5], 256.0f);
  EXPECT_EQ(outputs[1].tensor().data<float>()[9], 256.0f);
}

// A model big enough that its Add splits across threads.
std::string BigAddModel() {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {1 << 20}).Output("y", DataType::kFloat, {1 << 20});
  b.Node("Add", {"x", "x"}, {"y"});
  return b.Bytes();
}

TEST(SessionThreading, AnIdleSessionUsesNoCpu) {
  const std::string bytes = BigAddModel();
  const Tensor x = test::FloatTensor({1 << 20}, 0.0f, 1.0f);
  for (const char* spinning : {"1", "0"}) {
    SessionOptions options;
    options.intra_op_num_threads = 2;
    options.execution_mode = ExecutionMode::kParallel;
    options.config_entries["session.intra_op.allow_spinning"] = spinning;
    Session s = MakeSession(bytes, options);
    for (int r = 0; r < 20; ++r) ASSERT_EQ(s.Run({{"x", x}})[0].tensor().data<float>()[3], 6.0f);
    std::this_thread::sleep_for(10ms);
    const int64_t cpu0 = test::ProcessCpuNanos();
    const auto t0 = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(300ms);
    const int64_t cpu_ns = test::ProcessCpuNanos() - cpu0;
    const int64_t wall_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_LT(static_cast<double>(cpu_ns), 0.01 * static_cast<double>(wall_ns))
        << "idle session used " << cpu_ns / 1000 << " us of CPU in " << wall_ns / 1000 << " us (spinning=" << spinning
        << ")";
  }
}

TEST(SessionThreading, AllowSpinningConfigReachesThePools) {
  const std::string bytes = BigAddModel();
  const Tensor x = test::FloatTensor({1 << 20}, 0.0f, 1.0f);
  SessionOptions options;
  options.intra_op_num_threads = 2;
  options.execution_mode = ExecutionMode::kParallel;
  options.config_entries["session.intra_op.allow_spinning"] = "0";
  options.config_entries["session.inter_op.allow_spinning"] = "0";
  Session off = MakeSession(bytes, options);
  EXPECT_FALSE(off.impl().thread_pool()->options().allow_spinning);
  EXPECT_FALSE(off.impl().inter_op_thread_pool()->options().allow_spinning);
  for (int r = 0; r < 30; ++r) off.Run({{"x", x}});
  // The pool does not wait for its worker to start, and on a loaded machine the worker may not
  // have run yet: give it up to 5 s to start, find no work and sleep.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (off.impl().thread_pool()->stats().sleeps == 0 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    off.Run({{"x", x}});
  }
  EXPECT_EQ(off.impl().thread_pool()->stats().found_work_spinning, 0u);
  EXPECT_GT(off.impl().thread_pool()->stats().sleeps, 0u);

  options.config_entries.clear();
  Session on = MakeSession(bytes, options);
  EXPECT_TRUE(on.impl().thread_pool()->options().allow_spinning);
  EXPECT_TRUE(on.impl().inter_op_thread_pool()->options().allow_spinning);

  options.config_entries["session.intra_op.allow_spinning"] = "yes";
  const std::string what = ErrorText([&] { MakeSession(bytes, options); });
  EXPECT_NE(what.find("session.intra_op.allow_spinning"), std::string::npos) << what;
}

TEST(SessionThreading, DynamicBlockBaseConfigKeepsResults) {
  const std::string bytes = BigAddModel();
  const Tensor x = test::FloatTensor({1 << 20}, 0.0f, 1.0f);
  SessionOptions options;
  options.intra_op_num_threads = 2;
  options.config_entries["session.dynamic_block_base"] = "4";
  Session s = MakeSession(bytes, options);
  EXPECT_EQ(s.impl().thread_pool()->options().dynamic_block_base, 4);
  const Tensor y = s.Run({{"x", x}})[0].tensor();
  for (int64_t i = 0; i < y.size(); i += 4099) ASSERT_EQ(y.data<float>()[i], 2.0f * static_cast<float>(i));
  EXPECT_EQ(y.data<float>()[y.size() - 1], 2.0f * static_cast<float>(y.size() - 1));
  for (const char* bad : {"-1", "x", "4k"}) {
    options.config_entries["session.dynamic_block_base"] = bad;
    const std::string what = ErrorText([&] { MakeSession(bytes, options); });
    EXPECT_NE(what.find("session.dynamic_block_base"), std::string::npos) << what;
  }
}

TEST(SessionThreading, IntraOpThreadAffinitiesPinTheWorkers) {
  const std::vector<int> cpus = AvailableProcessors();
  const int first = cpus.front(), last = cpus.back();
  SessionOptions options;
  options.intra_op_num_threads = 3;
  options.config_entries["session.intra_op_thread_affinities"] =
      std::to_string(last + 1) + ";" + std::to_string(first + 1) + "-" + std::to_string(last + 1);
  Session s = MakeSession(BranchyModel(), options);
  const auto tids = s.impl().thread_pool()->WorkerThreadIds();
  ASSERT_EQ(tids.size(), 2u);
  EXPECT_EQ(test::AffinityOf(tids[0]), (std::vector<int>{last}));
  EXPECT_EQ(test::AffinityOf(tids[1]), cpus);

  options.intra_op_num_threads = 2;  // one worker, two entries
  const std::string what = ErrorText([&] { MakeSession(BranchyModel(), options); });
  EXPECT_NE(what.find("one entry per worker"), std::string::npos) << what;
  options.config_entries["session.intra_op_thread_affinities"] = "0";
  EXPECT_NE(ErrorText([&] { MakeSession(BranchyModel(), options); }).find("count from 1"), std::string::npos);
}

TEST(SessionThreading, APoolOnEveryProcessorPinsOneWorkerToEachOtherProcessor) {
  const std::vector<int> cpus = AvailableProcessors();
  if (cpus.size() < 2) GTEST_SKIP() << "needs two processors";
  SessionOptions options;
  options.intra_op_num_threads = static_cast<int>(cpus.size());
  Session s = MakeSession(BranchyModel(), options);
  const auto tids = s.impl().thread_pool()->WorkerThreadIds();
  ASSERT_EQ(tids.size(), cpus.size() - 1);
  for (size_t i = 0; i < tids.size(); ++i) EXPECT_EQ(test::AffinityOf(tids[i]), (std::vector<int>{cpus[i + 1]}));
  // The calling thread is never pinned by the session.
  EXPECT_EQ(test::AffinityOf(CurrentThreadId()), cpus);
  // Fewer threads than processors: the OS places the workers.
  if (cpus.size() > 2) {
    options.intra_op_num_threads = 2;
    Session fewer = MakeSession(BranchyModel(), options);
    EXPECT_EQ(test::AffinityOf(fewer.impl().thread_pool()->WorkerThreadIds()[0]), cpus);
  }
  // Affinities given in the config win.
  options.intra_op_num_threads = 2;
  options.config_entries["session.intra_op_thread_affinities"] = std::to_string(cpus.front() + 1);
  Session given = MakeSession(BranchyModel(), options);
  EXPECT_EQ(test::AffinityOf(given.impl().thread_pool()->WorkerThreadIds()[0]), (std::vector<int>{cpus.front()}));
}

TEST(SessionThreading, UnknownConfigKeysAreStillErrors) {
  SessionOptions options;
  options.config_entries["session.intra_op.allow_spining"] = "1";
  const std::string what = ErrorText([&] { MakeSession(BranchyModel(), options); });
  EXPECT_NE(what.find("session.intra_op.allow_spining"), std::string::npos) << what;
  SessionOptions negative;
  negative.inter_op_num_threads = -2;
  EXPECT_NE(ErrorText([&] { MakeSession(BranchyModel(), negative); }).find("inter_op_num_threads"), std::string::npos);
}

struct SessionHookLog {
  std::mutex mutex;
  int created = 0;
  int joined = 0;
};
SessionHookLog g_session_hooks;

CustomThreadHandle CountingCreate(void* options, ThreadWorkerFn fn, void* param) {
  auto* log = static_cast<SessionHookLog*>(options);
  std::lock_guard<std::mutex> lock(log->mutex);
  ++log->created;
  return new std::thread(fn, param);
}

void CountingJoin(CustomThreadHandle handle) {
  auto* thread = static_cast<std::thread*>(const_cast<void*>(handle));
  thread->join();
  delete thread;
  std::lock_guard<std::mutex> lock(g_session_hooks.mutex);
  ++g_session_hooks.joined;
}

TEST(SessionThreading, CustomThreadHooksMakeEveryWorker) {
  g_session_hooks.created = g_session_hooks.joined = 0;
  {
    SessionOptions options;
    options.intra_op_num_threads = 3;
    options.inter_op_num_threads = 2;
    options.execution_mode = ExecutionMode::kParallel;
    options.custom_create_thread_fn = &CountingCreate;
    options.custom_thread_creation_options = &g_session_hooks;
    options.custom_join_thread_fn = &CountingJoin;
    Session s = MakeSession(BranchyModel(), options);
    EXPECT_EQ(g_session_hooks.created, 2 + 1);
    s.Run({{"x", test::FloatTensor({4, 3})}});
    EXPECT_EQ(g_session_hooks.joined, 0);
  }
  EXPECT_EQ(g_session_hooks.joined, 3);
}

TEST(GlobalThreadPools, SessionsShareTheirThreads) {
  ReleaseGlobalThreadPools();
  const std::string bytes = BranchyModel();
  const int base = test::SettledThreadCount();
  {
    // Per-session pools: each session starts its own workers.
    SessionOptions own;
    own.intra_op_num_threads = 3;
    Session a = MakeSession(bytes, own), b = MakeSession(bytes, own);
    EXPECT_EQ(test::ProcessThreadCount(), base + 2 + 2);
  }
  EXPECT_EQ(test::WaitForThreadCount(base), base);

  ThreadingOptions global;
  global.intra_op_num_threads = 3;
  global.inter_op_num_threads = 2;
  SetGlobalThreadPools(global);
  EXPECT_TRUE(HasGlobalThreadPools());
  EXPECT_EQ(test::ProcessThreadCount(), base + 2 + 1);
  {
    SessionOptions shared;
    shared.use_global_thread_pool = true;
    shared.execution_mode = ExecutionMode::kParallel;
    Session a = MakeSession(bytes, shared), b = MakeSession(bytes, shared);
    EXPECT_EQ(test::ProcessThreadCount(), base + 2 + 1);  // no threads of their own
    EXPECT_EQ(a.impl().thread_pool(), b.impl().thread_pool());
    EXPECT_EQ(a.impl().inter_op_thread_pool(), b.impl().inter_op_thread_pool());
    EXPECT_EQ(a.impl().thread_pool()->num_threads(), 3);
    const Tensor x = test::FloatTensor({2, 3}, -1.0f, 1.0f);
    const float expected = std::max(x.data<float>()[5], 0.0f) * -x.data<float>()[5];
    std::thread other([&] {
      for (int r = 0; r < 50; ++r) EXPECT_EQ(b.Run({{"x", x}})[0].tensor().data<float>()[5], expected);
    });
    for (int r = 0; r < 50; ++r) EXPECT_EQ(a.Run({{"x", x}})[0].tensor().data<float>()[5], expected);
    other.join();

    // Threads come from the global options only.
    SessionOptions conflicting = shared;
    conflicting.intra_op_num_threads = 2;
    EXPECT_NE(ErrorText([&] { MakeSession(bytes, conflicting); }).find("intra_op_num_threads"), std::string::npos);
    conflicting = shared;
    conflicting.config_entries["session.intra_op.allow_spinning"] = "0";
    EXPECT_NE(ErrorText([&] { MakeSession(bytes, conflicting); }).find("allow_spinning"), std::string::npos);

    // Released pools live on while sessions use them.
    ReleaseGlobalThreadPools();
    EXPECT_FALSE(HasGlobalThreadPools());
    EXPECT_EQ(a.Run({{"x", x}})[0].tensor().data<float>()[5], expected);
    EXPECT_EQ(test::ProcessThreadCount(), base + 2 + 1);
  }
  EXPECT_EQ(test::WaitForThreadCount(base), base);

  SessionOptions shared;
  shared.use_global_thread_pool = true;
  EXPECT_NE(ErrorText([&] { MakeSession(bytes, shared); }).find("SetGlobalThreadPools"), std::string::npos);
}

TEST(GlobalThreadPools, OptionsAreCheckedAndHooksUsed) {
  ThreadingOptions bad;
  bad.intra_op_num_threads = 2;
  bad.intra_op_thread_affinities = "1;1";  // two entries for one worker
  EXPECT_THROW(SetGlobalThreadPools(bad), Error);
  bad.intra_op_num_threads = -1;
  EXPECT_THROW(SetGlobalThreadPools(bad), Error);

  g_session_hooks.created = g_session_hooks.joined = 0;
  ThreadingOptions hooked;
  hooked.intra_op_num_threads = 2;
  hooked.inter_op_num_threads = 3;
  hooked.allow_spinning = false;
  hooked.custom_create_thread_fn = &CountingCreate;
  hooked.custom_thread_creation_options = &g_session_hooks;
  hooked.custom_join_thread_fn = &CountingJoin;
  SetGlobalThreadPools(hooked);
  EXPECT_EQ(g_session_hooks.created, 1 + 2);
  {
    SessionOptions shared;
    shared.use_global_thread_pool = true;
    Session s = MakeSession(BranchyModel(), shared);
    EXPECT_FALSE(s.impl().thread_pool()->options().allow_spinning);
    EXPECT_EQ(s.impl().inter_op_thread_pool(), nullptr);  // sequential mode
  }
  ReleaseGlobalThreadPools();
  EXPECT_EQ(g_session_hooks.joined, 3);
}

}  // namespace
}  // namespace onyx
