// 16 independent zmm FMA chains: enough to cover 2 FMA ports x 4+ cycles of latency.
#include <immintrin.h>

#include "linalg/fma_peak.h"

namespace onyx::bench {

double RunFmaLoopAvx512(int64_t iterations) {
  constexpr int kChains = 16;
  __m512 acc[kChains];
  for (int j = 0; j < kChains; ++j) acc[j] = _mm512_set1_ps(static_cast<float>(j));
  const __m512 x = _mm512_set1_ps(0.999999f), y = _mm512_set1_ps(1e-6f);
  for (int64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 16
    for (int j = 0; j < kChains; ++j) acc[j] = _mm512_fmadd_ps(acc[j], x, y);
  }
  __m512 sum = acc[0];
  for (int j = 1; j < kChains; ++j) sum = _mm512_add_ps(sum, acc[j]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, sum);
  volatile float sink = lanes[0] + lanes[15];
  (void)sink;
  return static_cast<double>(iterations) * kChains * 16 * 2;
}

}  // namespace onyx::bench
