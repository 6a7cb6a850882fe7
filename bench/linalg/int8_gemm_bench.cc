// int8 GEMM (Q8Gemm, uint8 A x int8 packed B, int32 output) microbenchmarks: GOPS per ISA
// variant (one multiply-add = 2 ops) and the percentage of the machine's int8 dot-product peak
// measured here by a loop of independent dot-product instructions of the same kind the kernel
// uses (tdpbusd on AMX, vpdpbusd on AVX-512 VNNI, vpmaddwd + vpaddd on AVX2), timed in the
// thread's CPU time; at one thread %peak_cpu is the GEMM's own share in CPU time too. A is uint8
// read as the kernels get it (in place where K allows), B packed once. Shapes are MxNxK. Q8ConvW/...:
// ResNet-50 convolutions on the NCHW weight-stationary path (Q8ConvW / Q8GemmW), requantized.
//
//   build/release/bench/int8_gemm_bench --benchmark_filter='avx512vnni/1024'
//       --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
// GCC 12 reports its own AVX-512 headers' undefined-vector idiom as uninitialized.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <benchmark/benchmark.h>
#include <immintrin.h>

#include <algorithm>
#include <ctime>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "linalg/q8_conv_w.h"
#include "linalg/q8_gemm.h"
#include "platform/thread_pool.h"

namespace onyx::bench {
namespace {

constexpr int kPeakAccumulators = 12;  // enough independent chains to hide the latency

__attribute__((target("avx512f,avx512bw,avx512vnni"), noinline)) double PeakLoopVnni(int64_t iterations) {
  __m512i acc[kPeakAccumulators];
  for (auto& a : acc) a = _mm512_setzero_si512();
  const __m512i x = _mm512_set1_epi32(0x01020304), y = _mm512_set1_epi32(0x05060708);
  for (int64_t i = 0; i < iterations; ++i)
    for (auto& a : acc) a = _mm512_dpbusd_epi32(a, x, y);
  int sink = 0;
  for (auto& a : acc) sink += _mm512_reduce_add_epi32(a);
  benchmark::DoNotOptimize(sink);
  return static_cast<double>(iterations) * kPeakAccumulators * 64 * 2;  // 64 byte products a vector
}

__attribute__((target("avx2"), noinline)) double PeakLoopAvx2(int64_t iterations) {
  constexpr int kChains = 6;  // 6 accumulators + 6 multiplicands fit the 16 ymm registers
  __m256i acc[kChains], x[kChains];
#pragma GCC unroll 6
  for (int j = 0; j < kChains; ++j) acc[j] = _mm256_setzero_si256(), x[j] = _mm256_set1_epi32(0x00010002 + j);
  const __m256i y = _mm256_set1_epi32(0x00030004);
  for (int64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 6
    for (int j = 0; j < kChains; ++j) {
      __asm__ volatile("" : "+x"(x[j]));  // opaque: the multiplies are neither hoisted nor shared
      acc[j] = _mm256_add_epi32(acc[j], _mm256_madd_epi16(x[j], y));
    }
  }
  int sink = 0;
  for (auto& a : acc) sink += _mm256_extract_epi32(a, 0);
  benchmark::DoNotOptimize(sink);
  return static_cast<double>(iterations) * kChains * 16 * 2;  // 16 int16 products a vector
}

// AMX: four independent 16 x 16 accumulator tiles, each tdpbusd 16 x 16 x 64 byte products (the
// kernel's step without its loads). The caller has the tile permission (ForceQ8Isa("amx")).
__attribute__((target("amx-tile,amx-int8"), noinline)) double PeakLoopAmx(int64_t iterations) {
  struct alignas(64) {
    uint8_t palette = 1, start_row = 0, reserved[14] = {};
    uint16_t colsb[16] = {64, 64, 64, 64, 64, 64, 64, 64};
    uint8_t rows[16] = {16, 16, 16, 16, 16, 16, 16, 16};
  } cfg;
  __asm__ volatile("ldtilecfg %0" : : "m"(cfg));  // GCC 12's _tile_loadconfig reads only 8 bytes
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_zero(4);
  _tile_zero(5);
  _tile_zero(6);
  _tile_zero(7);
  for (int64_t i = 0; i < iterations; ++i) {
    _tile_dpbusd(0, 4, 6);
    _tile_dpbusd(1, 4, 7);
    _tile_dpbusd(2, 5, 6);
    _tile_dpbusd(3, 5, 7);
  }
  alignas(64) int32_t sink[16 * 16];
  _tile_stored(0, sink, 64);
  _tile_release();
  benchmark::DoNotOptimize(sink[0]);
  return static_cast<double>(iterations) * 4 * 16 * 16 * 64 * 2;
}

// Seconds of CPU time this thread has run: on a shared machine, time taken by other processes'
// turns on the core is not counted (wall time was).
double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Best-of-5 GOPS of one core's peak loop for the ISA, in this thread's CPU time (0 when it has none).
double PeakGops(const std::string& isa) {
  static std::map<std::string, double> cache;
  if (cache.count(isa)) return cache[isa];
  double best = 0.0;
  if (isa == "amx" && !linalg::ForceQ8Isa("amx")) return 0.0;  // asks Linux for the tiles
  for (int rep = 0; rep < 5 && isa != "scalar"; ++rep) {
    const double t0 = ThreadCpuSeconds();
    const double ops = isa == "amx"          ? PeakLoopAmx(2'000'000)
                       : isa == "avx512vnni" ? PeakLoopVnni(20'000'000)
                                             : PeakLoopAvx2(20'000'000);
    const double s = ThreadCpuSeconds() - t0;
    best = std::max(best, ops / s * 1e-9);
  }
  return cache[isa] = best;
}

ThreadPool* Pool(int threads) {
  static std::map<int, std::unique_ptr<ThreadPool>> pools;
  auto& pool = pools[threads];
  if (!pool) pool = std::make_unique<ThreadPool>(threads);
  return pool.get();
}

void BM_Q8Gemm(benchmark::State& state, std::string isa, int64_t m, int64_t n, int64_t k, int threads) {
  if (!linalg::ForceQ8Isa(isa)) {
    state.SkipWithError("ISA not supported by this CPU");
    return;
  }
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<uint8_t> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n));
  for (auto& v : a) v = static_cast<uint8_t>(byte(rng));
  for (auto& v : b) v = static_cast<uint8_t>(byte(rng));
  std::vector<int32_t> c(static_cast<size_t>(m * n));
  const int32_t a_zero = 128, b_zero = 0;
  const linalg::PackedQ8B packed(false, k, n, b.data(), true, n, &b_zero, false);
  linalg::Q8Output out;
  out.c = c.data();
  out.ldc = n;
  ThreadPool* pool = threads > 1 ? Pool(threads) : nullptr;
  const double cpu0 = ThreadCpuSeconds();
  for (auto _ : state) {
    linalg::Q8Gemm(m, a.data(), false, k, &a_zero, false, packed, out, pool);
    benchmark::ClobberMemory();
  }
  const double cpu = ThreadCpuSeconds() - cpu0;
  const double ops = 2.0 * static_cast<double>(m * n * k);
  state.counters["GOPS"] = benchmark::Counter(ops, benchmark::Counter::kIsIterationInvariantRate);
  const double peak = PeakGops(isa) * threads;
  if (peak > 0) {
    state.counters["%peak"] =
        benchmark::Counter(ops * 1e-9 * 100.0 / peak, benchmark::Counter::kIsIterationInvariantRate);
    // One thread: the same in the thread's CPU time, the figure that holds on a loaded machine.
    if (threads == 1 && cpu > 0)
      state.counters["%peak_cpu"] = ops * 1e-9 * 100.0 * static_cast<double>(state.iterations()) / cpu / peak;
  }
  state.SetLabel(packed.kernel_name());
  linalg::ForceQ8Isa("auto");
}

// Packing B once, as a session's creation does for each constant weight (KxN, row-major int8):
// GB/s of B read.
void BM_Q8PackB(benchmark::State& state, std::string isa, int64_t k, int64_t n) {
  if (!linalg::ForceQ8Isa(isa)) {
    state.SkipWithError("ISA not supported by this CPU");
    return;
  }
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<uint8_t> b(static_cast<size_t>(k * n));
  for (auto& v : b) v = static_cast<uint8_t>(byte(rng));
  const int32_t b_zero = 0;
  for (auto _ : state) {
    const linalg::PackedQ8B packed(false, k, n, b.data(), true, n, &b_zero, false);
    benchmark::DoNotOptimize(packed.kernel_name());
  }
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(k * n) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  linalg::ForceQ8Isa("auto");
}

void SetOps(benchmark::State& state, double ops, int threads) {
  state.counters["GOPS"] = benchmark::Counter(ops, benchmark::Counter::kIsIterationInvariantRate);
  const double peak = PeakGops("avx512vnni") * threads;
  if (peak > 0)
    state.counters["%peak"] =
        benchmark::Counter(ops * 1e-9 * 100.0 / peak, benchmark::Counter::kIsIterationInvariantRate);
}

// The NCHW convolution path (AVX-512 VNNI only): a 3x3 stride-1 pad-1 convolution of C channels
// to M on an HxH image through Q8ConvW (implicit im2col), or a pointwise one through Q8GemmW,
// requantized to uint8 as QLinearConv does.
void BM_Q8ConvW(benchmark::State& state, int64_t c, int64_t m, int64_t h, int64_t kernel, int threads) {
  if (!linalg::ForceQ8Isa("avx512vnni") || !linalg::Q8GemmWAvailable()) {
    state.SkipWithError("no AVX-512 VNNI");
    return;
  }
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> byte(0, 255);
  const int64_t k = c * kernel * kernel, n = h * h;
  std::vector<uint8_t> w(static_cast<size_t>(m * k)), x(static_cast<size_t>(c * n)), y(static_cast<size_t>(m * n));
  for (auto& v : w) v = static_cast<uint8_t>(byte(rng));
  for (auto& v : x) v = static_cast<uint8_t>(byte(rng));
  const int32_t w_zero = 0;
  const linalg::PackedQ8W packed(m, k, w.data(), true, &w_zero, false);
  std::vector<float> scale(static_cast<size_t>(m), 1e-4f);
  linalg::Q8Output out;
  out.kind = linalg::Q8Output::kQuantized;
  out.c = y.data();
  out.ldc = n;
  out.scale = scale.data();
  out.scale_per_column = true;
  out.zero_point = 128;
  linalg::Q8ConvShape s;
  s.channels = c, s.ih = s.iw = s.oh = s.ow = h, s.kh = s.kw = kernel, s.top = s.left = kernel / 2;
  ThreadPool* pool = threads > 1 ? Pool(threads) : nullptr;
  for (auto _ : state) {
    if (kernel == 1) linalg::Q8GemmW(packed, n, x.data(), false, n, 128, out, pool);
    else linalg::Q8ConvW(packed, s, x.data(), false, 128, out, pool);
    benchmark::ClobberMemory();
  }
  SetOps(state, 2.0 * static_cast<double>(m * n * k), threads);
  linalg::ForceQ8Isa("auto");
}

struct Shape {
  int64_t m, n, k;
};

const Shape kShapes[] = {
    {256, 256, 256}, {512, 512, 512}, {1024, 1024, 1024},
    {128, 768, 768}, {128, 3072, 768}, {128, 768, 3072},  // BERT-base, sequence 128
    {3136, 64, 64},  {784, 128, 128},  {196, 256, 1152},  // CNN pointwise / im2col shapes
    {4, 768, 768},   {16, 768, 768},                      // few rows: AMX's 32-row tile mostly padding
};

int Register() {
  for (const char* isa : {"amx", "avx512vnni", "avx2", "scalar"})
    for (const Shape& s : kShapes)
      for (int threads : {1, 2}) {
        if (std::string(isa) == "scalar" && (s.m * s.n * s.k > (int64_t{1} << 28) || threads > 1)) continue;
        const std::string name = std::string("Q8Gemm/") + isa + "/" + std::to_string(s.m) + "x" +
                                 std::to_string(s.n) + "x" + std::to_string(s.k) + "/threads:" + std::to_string(threads);
        benchmark::RegisterBenchmark(name.c_str(), BM_Q8Gemm, isa, s.m, s.n, s.k, threads)->UseRealTime();
      }
  for (const char* isa : {"amx", "avx512vnni", "avx2"})
    for (const auto& [k, n] : {std::pair<int64_t, int64_t>{768, 768}, {768, 3072}, {3072, 768}})  // BERT-base's
      benchmark::RegisterBenchmark(
          (std::string("Q8PackB/") + isa + "/" + std::to_string(k) + "x" + std::to_string(n)).c_str(), BM_Q8PackB, isa,
          k, n);
  // ResNet-50's 3x3 convolutions and two of its pointwise ones: {C, M, H, kernel}.
  const int64_t convs[][4] = {{64, 64, 56, 3},  {128, 128, 28, 3}, {256, 256, 14, 3},
                              {512, 512, 7, 3}, {64, 256, 56, 1},  {1024, 256, 14, 1}};
  for (const auto& v : convs)
    for (int threads : {1, 2}) {
      const std::string name = "Q8ConvW/" + std::to_string(v[0]) + "to" + std::to_string(v[1]) + "@" +
                               std::to_string(v[2]) + "/k" + std::to_string(v[3]) + "/threads:" + std::to_string(threads);
      benchmark::RegisterBenchmark(name.c_str(), BM_Q8ConvW, v[0], v[1], v[2], v[3], threads)->UseRealTime();
    }
  return 0;
}
const int kRegistered = Register();

}  // namespace
}  // namespace onyx::bench

BENCHMARK_MAIN();
