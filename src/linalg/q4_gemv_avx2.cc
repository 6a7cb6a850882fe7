// Q4Gemv for AVX2 + FMA: 32 codes are four vectors of 8 floats.
#if defined(__x86_64__)
#include <immintrin.h>

#include <cstdint>

namespace onyx::linalg {
namespace {

struct Q4Avx2 {
  using V = __m256;
  static constexpr int kLanes = 8;
  static V Zero() { return _mm256_setzero_ps(); }
  static V Set1(float x) { return _mm256_set1_ps(x); }
  static V Load(const float* p) { return _mm256_loadu_ps(p); }
  static V Fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V Add(V a, V b) { return _mm256_add_ps(a, b); }
  static float ReduceAdd(V v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  // Low nibbles (codes 0, 2, .., 30) first, then the high ones (A is permuted to match).
  static void Expand32(const uint8_t* p, V out[4]) {
    const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m256i first = _mm256_cvtepu8_epi32(raw), second = _mm256_cvtepu8_epi32(_mm_srli_si128(raw, 8));
    const __m256i mask = _mm256_set1_epi32(15);
    out[0] = _mm256_cvtepi32_ps(_mm256_and_si256(first, mask));
    out[1] = _mm256_cvtepi32_ps(_mm256_and_si256(second, mask));
    out[2] = _mm256_cvtepi32_ps(_mm256_srli_epi32(first, 4));
    out[3] = _mm256_cvtepi32_ps(_mm256_srli_epi32(second, 4));
  }
};

}  // namespace
}  // namespace onyx::linalg

#include "linalg/q4_gemv_impl.h"
#include "linalg/q4_gemv_kernel.h"

namespace onyx::linalg {

void Q4GemvAvx2(const float* a, int64_t lda, int rows, int64_t k, const uint8_t* b, int64_t block,
                const float* scales, const float* zeros, const float* bias, float* y, int64_t ldy, int64_t n0,
                int64_t n1) {
  Q4GemvImpl<Q4Avx2>(a, lda, rows, k, b, block, scales, zeros, bias, y, ldy, n0, n1);
}

}  // namespace onyx::linalg
#endif  // __x86_64__
