// SGEMM microbenchmarks: GFLOP/s per ISA variant on square sizes and transformer shapes, one and
// two threads, and the percentage of the measured FMA peak (peak of one core x threads).
// Shapes are named MxNxK.
//
//   build/release/bench/gemm_bench --benchmark_filter='avx512/1024'
//       --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// With repetitions, "max" is the best %peak / GFLOP/s and "min" the best time. Machines shared
// with other work are noisy: prefer the best of several repetitions. On one thread,
// %peak_paired divides each call's rate by an FMA loop's rate measured right after it, which
// cancels the host's clock drift (the start-up peak can be 10% off an hour later).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <time.h>

#include "linalg/fma_peak.h"
#include "linalg/gemm.h"
#include "platform/thread_pool.h"

namespace onyx::bench {
namespace {

std::map<std::string, double>& PeakGflops() {
  static std::map<std::string, double> peaks;
  return peaks;
}

// 64-byte aligned, as the engine's tensors are.
linalg::AlignedFloats RandomFloats(size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  linalg::AlignedFloats v(count);
  for (size_t i = 0; i < count; ++i) v.data()[i] = dist(rng);
  return v;
}

ThreadPool* Pool(int threads) {
  static std::map<int, std::unique_ptr<ThreadPool>> pools;
  auto& pool = pools[threads];
  if (!pool) pool = std::make_unique<ThreadPool>(threads);
  return pool.get();
}

double ProcessCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// One-thread efficiency against an FMA loop run right after each call: the host's clock drifts
// by 10% and more during a session (other VMs), so a peak measured once at start-up misstates
// later benchmarks. Reported as the median over iterations ("%peak_paired").
class PairedPeak {
 public:
  PairedPeak(const std::string& isa, int threads, double flops_per_call)
      : loop_(threads != 1 ? nullptr : isa == "avx512" ? &RunFmaLoopAvx512 : isa == "avx2" ? &RunFmaLoopAvx2 : nullptr),
        flops_per_call_(flops_per_call) {}

  void Start() { start_ = ThreadCpuSeconds(); }
  void Stop(benchmark::State& state) {
    if (loop_ == nullptr) return;
    const double seconds = ThreadCpuSeconds() - start_;
    state.PauseTiming();
    const double fma_start = ThreadCpuSeconds();
    const double fma_flops = loop_(int64_t{1} << 18);
    const double fma_rate = fma_flops / (ThreadCpuSeconds() - fma_start);
    ratios_.push_back(flops_per_call_ / seconds / fma_rate);
    state.ResumeTiming();
  }
  void Report(benchmark::State& state) {
    if (ratios_.empty()) return;
    std::nth_element(ratios_.begin(), ratios_.begin() + ratios_.size() / 2, ratios_.end());
    state.counters["%peak_paired"] = ratios_[ratios_.size() / 2] * 100.0;
  }

 private:
  double (*loop_)(int64_t);
  double flops_per_call_;
  double start_ = 0.0;
  std::vector<double> ratios_;
};

// GFLOP/s: wall clock. GFLOP/s_cpu and %peak: over the CPU time the threads really got (what
// the wall clock would show on an idle machine), against the one-core FMA peak x threads.
void SetCounters(benchmark::State& state, const std::string& isa, int threads, double flops_per_call,
                 double cpu_seconds) {
  const double gflop = flops_per_call * static_cast<double>(state.iterations()) * 1e-9;
  state.counters["GFLOP/s"] = benchmark::Counter(gflop, benchmark::Counter::kIsRate);
  const double cpu_rate = gflop * threads / cpu_seconds;
  state.counters["GFLOP/s_cpu"] = cpu_rate;
  const double peak = PeakGflops()[isa];
  if (peak > 0.0) state.counters["%peak"] = cpu_rate / (peak * threads) * 100.0;
}

// The operands of the shape being measured, kept across the runs Google Benchmark makes of one
// benchmark (a packed 768 x 50257 B is 150 MB); replaced when the shape or ISA changes.
struct Operands {
  std::string key;
  linalg::AlignedFloats a, b, bias, c;
  std::unique_ptr<linalg::PackedB> packed;
};

Operands& GetOperands(const std::string& isa, int64_t m, int64_t n, int64_t k, bool packed) {
  static Operands ops;
  const std::string key = isa + "/" + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  if (ops.key != key) {
    ops = Operands{};  // free the previous shape first
    ops.key = key;
    ops.a = RandomFloats(static_cast<size_t>(m * k), 1);
    ops.b = RandomFloats(static_cast<size_t>(k * n), 2);
    ops.bias = RandomFloats(static_cast<size_t>(n), 3);
    ops.c = linalg::AlignedFloats(static_cast<size_t>(m * n));
  }
  if (packed && !ops.packed) ops.packed = std::make_unique<linalg::PackedB>(false, k, n, ops.b.data(), n, Pool(2));
  return ops;
}

// Forces the ISA being measured, or marks the benchmark skipped when the CPU lacks it.
bool UseIsa(benchmark::State& state, const std::string& isa) {
  if (linalg::ForceIsa(isa)) return true;
  state.SkipWithError("ISA not supported");
  return false;
}

// Times `call` (one product of flops_per_call) each iteration, paired with the FMA peak, and
// sets the counters; then lets the ISA choose itself again.
template <class Call>
void MeasureCalls(benchmark::State& state, const std::string& isa, int threads, double flops_per_call, Call call) {
  PairedPeak paired(isa, threads, flops_per_call);
  const double cpu_start = ProcessCpuSeconds();
  for (auto _ : state) {
    paired.Start();
    call();
    benchmark::ClobberMemory();
    paired.Stop(state);
  }
  paired.Report(state);
  SetCounters(state, isa, threads, flops_per_call, ProcessCpuSeconds() - cpu_start);
  linalg::ForceIsa("auto");
}

// B as given each call (packed inside Sgemm); trans_b: B stored [N, K], as nn.Linear weights.
void BmSgemm(benchmark::State& state, std::string isa, int64_t m, int64_t n, int64_t k, int threads, bool trans_b) {
  if (!UseIsa(state, isa)) return;
  Operands& ops = GetOperands(isa, m, n, k, false);
  ThreadPool* pool = Pool(threads);
  const int64_t ldb = trans_b ? k : n;
  MeasureCalls(state, isa, threads, 2.0 * m * n * k, [&] {
    linalg::Sgemm(false, trans_b, m, n, k, 1.0f, ops.a.data(), k, ops.b.data(), ldb, 0.0f, ops.c.data(), n, pool);
    benchmark::DoNotOptimize(ops.c.data());
  });
}

// Constant weights packed once (as a session does), with a fused bias + GELU when asked.
void BmSgemmPackedB(benchmark::State& state, std::string isa, int64_t m, int64_t n, int64_t k, int threads,
                    bool gelu) {
  if (!UseIsa(state, isa)) return;
  Operands& ops = GetOperands(isa, m, n, k, true);
  ThreadPool* pool = Pool(threads);
  linalg::GemmEpilogue ep;
  ep.bias_per_col = ops.bias.data();
  ep.activation = linalg::GemmEpilogue::kGeluErf;
  MeasureCalls(state, isa, threads, 2.0 * m * n * k, [&] {
    linalg::SgemmPackedB(false, m, n, k, 1.0f, ops.a.data(), k, *ops.packed, 0.0f, ops.c.data(), n, pool,
                         gelu ? &ep : nullptr);
    benchmark::DoNotOptimize(ops.c.data());
  });
}

// The same product over a model's worth of distinct packed weights (512 MB, cycled), so that B
// comes from memory at each call as in a session run, not from the cache the previous iteration
// left it in.
void BmSgemmPackedBCold(benchmark::State& state, std::string isa, int64_t m, int64_t n, int64_t k, int threads) {
  if (!UseIsa(state, isa)) return;
  Operands& ops = GetOperands(isa, m, n, k, false);
  static std::string key;
  static std::vector<linalg::PackedB> packs;
  if (key != ops.key) {
    packs.clear();
    key = ops.key;
    const int64_t count = std::max<int64_t>(2, (int64_t{512} << 20) / (k * n * static_cast<int64_t>(sizeof(float))));
    for (int64_t i = 0; i < count; ++i) packs.emplace_back(false, k, n, ops.b.data(), n, Pool(2));
  }
  ThreadPool* pool = Pool(threads);
  size_t next = 0;
  MeasureCalls(state, isa, threads, 2.0 * m * n * k, [&] {
    linalg::SgemmPackedB(false, m, n, k, 1.0f, ops.a.data(), k, packs[next], 0.0f, ops.c.data(), n, pool, nullptr);
    next = (next + 1) % packs.size();
    benchmark::DoNotOptimize(ops.c.data());
  });
}

void BmFmaPeak(benchmark::State& state, std::string isa) {
  double flops = 0.0;
  const double cpu_start = ProcessCpuSeconds();
  for (auto _ : state) flops += isa == "avx512" ? RunFmaLoopAvx512(1 << 16) : RunFmaLoopAvx2(1 << 16);
  state.counters["GFLOP/s"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsRate);
  state.counters["GFLOP/s_cpu"] = flops * 1e-9 / (ProcessCpuSeconds() - cpu_start);
}

template <class... Args>
benchmark::internal::Benchmark* Register(const std::string& name, Args&&... args) {
  auto* bm = benchmark::RegisterBenchmark(name.c_str(), std::forward<Args>(args)...);
  bm->UseRealTime()->Unit(benchmark::kMillisecond);
  bm->ComputeStatistics("min", [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); });
  bm->ComputeStatistics("max", [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); });
  return bm;
}

void RegisterAll() {
  const auto isas = linalg::SupportedSgemmIsas();
  for (const std::string& isa : isas) {
    if (isa == "scalar") continue;
    PeakGflops()[isa] = MeasureFmaPeakGflops(isa);
    std::printf("FMA peak %-6s one core: %.1f GFLOP/s (best of 15, thread CPU time)\n", isa.c_str(), PeakGflops()[isa]);
    Register("FmaPeak/" + isa, BmFmaPeak, isa);
  }
  for (const std::string& isa : isas)
    for (const int64_t s : {64, 128, 256, 512, 1024, 2048})
      for (const int threads : {1, 2}) {
        if (isa == "scalar" && s > 512) continue;  // minutes per size, and not what ships
        const std::string shape = std::to_string(s) + "x" + std::to_string(s) + "x" + std::to_string(s);
        Register("Sgemm/" + isa + "/" + shape + "/threads:" + std::to_string(threads), BmSgemm, isa, s, s, s,
                 threads, false);
      }
  // Transformer projections (BERT-base / GPT-2: hidden 768, MLP 3072, fused QKV 2304, vocabulary
  // 50257) with constant packed weights; m = tokens. Plus the same product with B transposed
  // unpacked (B^T stored, as in attention and nn.Linear weights).
  const std::vector<std::pair<int64_t, int64_t>> kn = {{768, 768},  {768, 2304},  {768, 3072}, {768, 50257},
                                                       {3072, 768}, {3072, 2304}, {3072, 3072}};
  for (const std::string& isa : isas) {
    if (isa == "scalar") continue;
    for (const int64_t m : {128, 256})
      for (const auto& [k, n] : kn)
        for (const int threads : {1, 2}) {
          const std::string shape = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
          const std::string suffix = "/" + isa + "/" + shape + "/threads:" + std::to_string(threads);
          Register("SgemmPackedB" + suffix, BmSgemmPackedB, isa, m, n, k, threads, false);
          if (n == 3072) Register("SgemmPackedB+bias+gelu" + suffix, BmSgemmPackedB, isa, m, n, k, threads, true);
          if (n <= 3072) Register("SgemmTransB" + suffix, BmSgemm, isa, m, n, k, threads, true);
        }
  }
  // BERT-base's projections with their weights cold, as in a session run.
  for (const std::string& isa : isas) {
    if (isa == "scalar") continue;
    for (const auto& [k, n] : std::vector<std::pair<int64_t, int64_t>>{{768, 768}, {768, 3072}, {3072, 768}})
      for (const int threads : {1, 2})
        Register("SgemmPackedBCold/" + isa + "/128x" + std::to_string(n) + "x" + std::to_string(k) +
                     "/threads:" + std::to_string(threads),
                 BmSgemmPackedBCold, isa, 128, n, k, threads);
  }
  // ViT-tiny (197 tokens, hidden 192, MLP 768, head 64): small products where packing A, the
  // ragged last row panel and per-call overhead matter. Attention's per-head Q K^T and P V.
  const std::vector<std::pair<int64_t, int64_t>> vit_kn = {{192, 576}, {192, 192}, {192, 768}, {768, 192}};
  for (const std::string& isa : isas) {
    if (isa == "scalar") continue;
    for (const int threads : {1, 2}) {
      const std::string suffix = "/" + isa + "/";
      const std::string t = "/threads:" + std::to_string(threads);
      for (const auto& [k, n] : vit_kn)
        Register("VitPackedB" + suffix + "197x" + std::to_string(n) + "x" + std::to_string(k) + t, BmSgemmPackedB,
                 isa, 197, n, k, threads, false);
      Register("VitQKt" + suffix + "197x197x64" + t, BmSgemm, isa, 197, 197, 64, threads, true);
      Register("VitPV" + suffix + "197x64x197" + t, BmSgemm, isa, 197, 64, 197, threads, false);
    }
  }
}

}  // namespace
}  // namespace onyx::bench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  onyx::bench::RegisterAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
