// q8_pool.h's Q8MaxPool2d compiled for avx512 (q8_pool_impl.h).
#if defined(__x86_64__)

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12 reports its own AVX-512 headers' undefined-vector idiom as maybe uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <immintrin.h>

#include <type_traits>

#include "linalg/q8_pool_impl.h"

namespace onyx::linalg {
namespace {

// q8_pool_impl.h's row operations with a masked last block: the input rows (112 codes on
// ResNet's stem) have no room past their end, and the plain loops' scalar tails and memcpy calls
// were about half the time of ResNet's 3x3 stride-2 pool (perf).
struct Avx512Rows {
  static __mmask64 Tail(int64_t n) { return n >= 64 ? ~__mmask64{0} : (__mmask64{1} << n) - 1; }
  template <typename T>
  static __m512i Max(__m512i a, __m512i b) {
    if constexpr (std::is_signed_v<T>) return _mm512_max_epi8(a, b);
    else return _mm512_max_epu8(a, b);
  }
  // Each block's max over the rows in a register, stored once.
  template <typename T>
  static void MaxRows(T* dst, const T* src, int64_t ld, int64_t rows, int64_t n) {
    for (int64_t i = 0; i < n; i += 64) {
      const __mmask64 m = Tail(n - i);
      __m512i v = _mm512_maskz_loadu_epi8(m, src + i);
      for (int64_t k = 1; k < rows; ++k) v = Max<T>(v, _mm512_maskz_loadu_epi8(m, src + k * ld + i));
      _mm512_mask_storeu_epi8(dst + i, m, v);
    }
  }
  // dst[i] = src[2 i]: the even bytes of each 64-code block, by truncating its 16-bit lanes.
  template <typename T>
  static void Even(T* dst, const T* src, int64_t n, T*, int64_t) {
    for (int64_t i = 0; i < n; i += 32) {
      const __mmask64 m = Tail(2 * (n - i));
      const __m256i even = _mm512_cvtepi16_epi8(_mm512_maskz_loadu_epi8(m, src + 2 * i));
      _mm256_mask_storeu_epi8(dst + i, static_cast<__mmask32>(Tail(n - i)), even);
    }
  }
};

}  // namespace

void Q8MaxPool2dU8Avx512(const Q8PoolGeometry& g, const uint8_t* x, uint8_t* y, uint8_t* scratch) {
  Q8MaxPool2dImpl<uint8_t, Avx512Rows>(g, x, y, scratch);
}

void Q8MaxPool2dS8Avx512(const Q8PoolGeometry& g, const int8_t* x, int8_t* y, int8_t* scratch) {
  Q8MaxPool2dImpl<int8_t, Avx512Rows>(g, x, y, scratch);
}

}  // namespace onyx::linalg
#endif  // __x86_64__
