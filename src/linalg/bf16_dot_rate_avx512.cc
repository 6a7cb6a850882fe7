// How fast this core runs vdpbf16ps against AVX-512 FMA, for bf16_gemm_config.cc: the bf16 GEMM
// pays only where its instruction outruns the SGEMM's. AMD Zen 4 runs a vdpbf16ps (32
// multiply-adds) at an FMA's rate, twice the work; the Sapphire Rapids-class Xeon we measured
// runs it at a quarter of an FMA's rate (0.5x the multiply-adds), and bfloat16 models there ran
// 0.55-0.83x their float32 twins on the bf16 GEMM.
#if defined(__x86_64__)

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12 reports its own AVX-512 headers' undefined-vector idiom as (maybe) uninitialized.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <immintrin.h>
#include <time.h>

#include <algorithm>

#include "linalg/bf16_gemm_kernel.h"

#define ONYX_BF16_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,fma")))

namespace onyx::linalg {
namespace {

constexpr int kChains = 24;        // independent accumulators: more than latency x throughput
// About 10-50 us a loop: the two classes measured (0.5 and 2.0) are 4x apart, and the measurement
// runs inside a process's first session creation (about 0.7 ms at 20000 steps on Zen 4).
constexpr int64_t kSteps = 2000;

volatile float g_sink;

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

ONYX_BF16_TARGET void Keep(const __m512* acc) {
  __m512 sum = acc[0];
  for (int i = 1; i < kChains; ++i) sum = _mm512_add_ps(sum, acc[i]);
  g_sink = _mm512_reduce_add_ps(sum);
}

ONYX_BF16_TARGET double DotLoopSeconds() {
  __m512 acc[kChains];
  for (auto& a : acc) a = _mm512_setzero_ps();
  const __m512bh x = (__m512bh)_mm512_set1_epi32(0x3f803f80), y = (__m512bh)_mm512_set1_epi32(0x3c003c00);
  const double t0 = ThreadCpuSeconds();
  for (int64_t s = 0; s < kSteps; ++s) {
#pragma GCC unroll 24
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_dpbf16_ps(acc[i], x, y);
  }
  const double t = ThreadCpuSeconds() - t0;
  Keep(acc);
  return t;
}

ONYX_BF16_TARGET double FmaLoopSeconds() {
  __m512 acc[kChains];
  for (auto& a : acc) a = _mm512_setzero_ps();
  const __m512 x = _mm512_set1_ps(1.0f), y = _mm512_set1_ps(1e-3f);
  const double t0 = ThreadCpuSeconds();
  for (int64_t s = 0; s < kSteps; ++s) {
#pragma GCC unroll 24
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_fmadd_ps(x, y, acc[i]);
  }
  const double t = ThreadCpuSeconds() - t0;
  Keep(acc);
  return t;
}

}  // namespace

double MeasureBf16DotOverFmaRate() {
  // Best of three, alternating, in this thread's CPU time: a busy machine slows both alike.
  double dot = 1e30, fma = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    dot = std::min(dot, DotLoopSeconds());
    fma = std::min(fma, FmaLoopSeconds());
  }
  if (dot <= 0.0 || fma <= 0.0) return 0.0;
  return (32.0 / dot) / (16.0 / fma);  // multiply-adds per second, vdpbf16ps over FMA
}

}  // namespace onyx::linalg
#endif  // __x86_64__
