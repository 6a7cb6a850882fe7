// Q4Gemv for AVX-512: 32 codes are two vectors of 16 floats.
#if defined(__x86_64__)

// GCC 12 reports its own AVX-512 headers' undefined-vector idiom as maybe uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <immintrin.h>

#include <cstdint>

namespace onyx::linalg {
namespace {

struct Q4Avx512 {
  using V = __m512;
  static constexpr int kLanes = 16;
  static V Zero() { return _mm512_setzero_ps(); }
  static V Set1(float x) { return _mm512_set1_ps(x); }
  static V Load(const float* p) { return _mm512_loadu_ps(p); }
  static V Fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V Add(V a, V b) { return _mm512_add_ps(a, b); }
  static float ReduceAdd(V v) { return _mm512_reduce_add_ps(v); }
  // Bytes b0..b15: the low nibbles are codes 0, 2, .., 30, the high ones 1, 3, .., 31 (A is
  // permuted to match).
  static void Expand32(const uint8_t* p, V out[2]) {
    const __m512i bytes = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    out[0] = _mm512_cvtepi32_ps(_mm512_and_si512(bytes, _mm512_set1_epi32(15)));
    out[1] = _mm512_cvtepi32_ps(_mm512_srli_epi32(bytes, 4));
  }
};

}  // namespace
}  // namespace onyx::linalg

#include "linalg/q4_gemv_impl.h"
#include "linalg/q4_gemv_kernel.h"

namespace onyx::linalg {

void Q4GemvAvx512(const float* a, int64_t lda, int rows, int64_t k, const uint8_t* b, int64_t block,
                  const float* scales, const float* zeros, const float* bias, float* y, int64_t ldy, int64_t n0,
                  int64_t n1) {
  Q4GemvImpl<Q4Avx512>(a, lda, rows, k, b, block, scales, zeros, bias, y, ldy, n0, n1);
}

}  // namespace onyx::linalg
#endif  // __x86_64__
