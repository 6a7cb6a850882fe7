// x8_transpose.h's Transpose2D8 for AVX2: 16 rows x 32 columns a block (x8_transpose_impl.h).
#if defined(__x86_64__)
#include <immintrin.h>

#include "linalg/x8_transpose_impl.h"

namespace onyx::linalg {
namespace {

struct Avx2Bytes {
  using T = __m256i;
  static constexpr int kBytes = 32;
  static T Load(const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static T UnpackLo(T a, T b) { return _mm256_unpacklo_epi8(a, b); }
  static T UnpackHi(T a, T b) { return _mm256_unpackhi_epi8(a, b); }
  static void StoreLane(uint8_t* p, T v, int lane) {
    const __m128i half = lane == 0 ? _mm256_castsi256_si128(v) : _mm256_extracti128_si256(v, 1);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), half);
  }
};

}  // namespace

void Transpose2D8Avx2(const void* in, size_t ld_in, void* out, size_t ld_out, size_t rows, size_t cols) {
  Transpose2D8Impl<Avx2Bytes>(in, ld_in, out, ld_out, rows, cols);
}

}  // namespace onyx::linalg
#endif  // __x86_64__
