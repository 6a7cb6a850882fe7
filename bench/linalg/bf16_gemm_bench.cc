// bf16 GEMM variants (AMX-BF16, AVX-512 BF16) against the SGEMM at the same shapes, all with B
// packed once, and against a vdpbf16ps peak loop. The GEMMs alternate inside each round (the
// machine may be shared) and the best round of each is reported. Shapes are MxNxK (BERT-base's
// projections, ResNet-50's pointwise convolutions).
//
//   build/<dir>/bench/bf16_gemm_bench [threads] [rounds]
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <vector>

#include "linalg/bf16_gemm.h"
#include "linalg/fma_peak.h"
#include "linalg/gemm.h"
#include "platform/thread_pool.h"

namespace onyx::bench {
namespace {

// 16 independent vdpbf16ps chains, each 32 multiply-adds (64 flops) per instruction.
__attribute__((target("avx512f,avx512bf16"))) double RunDpbf16Loop(int64_t iterations) {
  constexpr int kChains = 16;
  __m512 acc[kChains];
  for (int j = 0; j < kChains; ++j) acc[j] = _mm512_set1_ps(static_cast<float>(j));
  const __m512bh x = (__m512bh)_mm512_set1_epi32(0x3F803F80), y = (__m512bh)_mm512_set1_epi32(0x33003300);
  for (int64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 16
    for (int j = 0; j < kChains; ++j) acc[j] = _mm512_dpbf16_ps(acc[j], x, y);
  }
  __m512 sum = acc[0];
  for (int j = 1; j < kChains; ++j) sum = _mm512_add_ps(sum, acc[j]);
  volatile float sink = _mm512_reduce_add_ps(sum);
  (void)sink;
  return static_cast<double>(iterations) * kChains * 64;
}

double Seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double Dpbf16PeakGflops() {
  double best = 0.0;
  for (int r = 0; r < 5; ++r) {
    const double t0 = Seconds();
    const double flops = RunDpbf16Loop(2000000);
    best = std::max(best, flops / (Seconds() - t0) * 1e-9);
  }
  return best;
}

std::vector<float> Random(size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (auto& x : v) x = dist(rng);
  return v;
}

}  // namespace
}  // namespace onyx::bench

int main(int argc, char** argv) {
  using namespace onyx;
  using namespace onyx::bench;
  const int threads = argc > 1 ? std::atoi(argv[1]) : 1;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 20;
  const auto isas = linalg::SupportedBf16Isas();
  const bool has_amx = std::find(isas.begin(), isas.end(), "amx") != isas.end();
  const bool has_avx512 = std::find(isas.begin(), isas.end(), "avx512bf16") != isas.end();
  if (!has_avx512) {
    std::printf("no AVX-512 BF16 on this CPU: the bf16 GEMM is not offered\n");
    return 0;
  }
  const double bf16_peak = Dpbf16PeakGflops(), fma_peak = MeasureFmaPeakGflops("avx512");
  std::printf("one core: vdpbf16ps peak %.1f GFLOP/s, AVX-512 FMA peak %.1f GFLOP/s; AMX-BF16 %s; %d thread(s), "
              "best of %d\n\n",
              bf16_peak, fma_peak, has_amx ? "yes" : "no", threads, rounds);
  std::printf("| M x N x K | SGEMM GFLOP/s | %% FMA peak | AVX-512 bf16 GFLOP/s | %% vdpbf16ps peak | AMX bf16 "
              "GFLOP/s | AVX-512 bf16/SGEMM | AMX/SGEMM | max diff / max |C| (AMX, else AVX-512) |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  ThreadPool pool(threads);
  ThreadPool* p = threads > 1 ? &pool : nullptr;
  const int64_t shapes[][3] = {{128, 768, 768}, {128, 3072, 768}, {128, 768, 3072}, {512, 768, 768},
                               {64, 128, 512},  {3136, 64, 256},  {3136, 256, 64}, {784, 512, 128},
                               {196, 1024, 256}};
  for (const auto& s : shapes) {
    const int64_t m = s[0], n = s[1], k = s[2];
    const auto a = Random(static_cast<size_t>(m * k), 1), b = Random(static_cast<size_t>(k * n), 2);
    std::vector<float> c(static_cast<size_t>(m * n));
    const linalg::PackedB f32(false, k, n, b.data(), n);
    const linalg::PackedBf16B bf16(false, k, n, b.data(), n);
    const double flops = 2.0 * m * n * k;
    const int reps = std::max<int64_t>(1, static_cast<int64_t>(2e9 / flops));
    auto time_bf16 = [&](const char* isa) {
      linalg::ForceBf16Isa(isa);
      const double t0 = Seconds();
      for (int i = 0; i < reps; ++i)
        linalg::Bf16GemmPackedB(false, m, n, k, 1.0f, a.data(), k, bf16, 0.0f, c.data(), n, p);
      return (Seconds() - t0) / reps;
    };
    double best_f32 = 1e30, best_avx512 = 1e30, best_amx = 1e30;
    for (int r = 0; r < rounds; ++r) {
      const double t0 = Seconds();
      for (int i = 0; i < reps; ++i)
        linalg::SgemmPackedB(false, m, n, k, 1.0f, a.data(), k, f32, 0.0f, c.data(), n, p);
      best_f32 = std::min(best_f32, (Seconds() - t0) / reps);
      best_avx512 = std::min(best_avx512, time_bf16("avx512bf16"));
      if (has_amx) best_amx = std::min(best_amx, time_bf16("amx"));
    }
    // Sanity: the bf16 product against the SGEMM's, relative to the largest output.
    std::vector<float> c32(c.size());
    linalg::SgemmPackedB(false, m, n, k, 1.0f, a.data(), k, f32, 0.0f, c32.data(), n, p);
    linalg::ForceBf16Isa(has_amx ? "amx" : "avx512bf16");
    linalg::Bf16GemmPackedB(false, m, n, k, 1.0f, a.data(), k, bf16, 0.0f, c.data(), n, p);
    linalg::ForceBf16Isa("auto");
    double err = 0.0, mag = 0.0;
    for (size_t i = 0; i < c.size(); ++i) {
      err = std::max(err, static_cast<double>(std::fabs(c[i] - c32[i])));
      mag = std::max(mag, static_cast<double>(std::fabs(c32[i])));
    }
    const double g32 = flops / best_f32 * 1e-9, g16 = flops / best_avx512 * 1e-9;
    const double gamx = has_amx ? flops / best_amx * 1e-9 : 0.0;
    std::printf("| %lldx%lldx%lld | %.1f | %.0f%% | %.1f | %.0f%% | %.1f | %.2f | %.2f | %.1e |\n",
                static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k), g32,
                100.0 * g32 / (fma_peak * threads), g16, 100.0 * g16 / (bf16_peak * threads), gamx, g16 / g32,
                gamx / g32, err / mag);
  }
  return 0;
}
