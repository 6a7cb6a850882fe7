// 12 independent ymm FMA chains (of 16 registers): enough for 2 FMA ports x 4-5 cycles latency.
#include <immintrin.h>

#include "linalg/fma_peak.h"

namespace onyx::bench {

double RunFmaLoopAvx2(int64_t iterations) {
  constexpr int kChains = 12;
  __m256 acc[kChains];
  for (int j = 0; j < kChains; ++j) acc[j] = _mm256_set1_ps(static_cast<float>(j));
  const __m256 x = _mm256_set1_ps(0.999999f), y = _mm256_set1_ps(1e-6f);
  for (int64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 12
    for (int j = 0; j < kChains; ++j) acc[j] = _mm256_fmadd_ps(acc[j], x, y);
  }
  __m256 sum = acc[0];
  for (int j = 1; j < kChains; ++j) sum = _mm256_add_ps(sum, acc[j]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, sum);
  volatile float sink = lanes[0] + lanes[7];
  (void)sink;
  return static_cast<double>(iterations) * kChains * 8 * 2;
}

}  // namespace onyx::bench
