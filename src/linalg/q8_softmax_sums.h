// The row sums of Q8SoftmaxRows's vector variants (q8_softmax.h): N rows of D floats, each added in
// element order as the scalar reference adds it, the N chains side by side so that one row's sum
// does not wait on each add's latency. Internal linkage: the AVX2 and AVX-512 files each compile
// their own copy under their own flags (an inline function they shared could run either copy).
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace onyx::linalg {
namespace {

template <int N>
void SumRowsInOrder(const float* e, int64_t D, float* sum) {
  __m128 s[N];
  for (int r = 0; r < N; ++r) s[r] = _mm_setzero_ps();
  for (int64_t i = 0; i < D; ++i) {
#pragma GCC unroll 8
    for (int r = 0; r < N; ++r) s[r] = _mm_add_ss(s[r], _mm_load_ss(e + r * D + i));
  }
  for (int r = 0; r < N; ++r) sum[r] = _mm_cvtss_f32(s[r]);
}

// The sums of `rows` rows (at most 16) of D floats: 8 chains at a time, then 2, then 1.
inline void SumRows(const float* e, int64_t rows, int64_t D, float* sum) {
  int64_t r = 0;
  for (; r + 8 <= rows; r += 8) SumRowsInOrder<8>(e + r * D, D, sum + r);
  for (; r + 2 <= rows; r += 2) SumRowsInOrder<2>(e + r * D, D, sum + r);
  if (r < rows) SumRowsInOrder<1>(e + r * D, D, sum + r);
}

}  // namespace
}  // namespace onyx::linalg
