// x8_transpose.h's Transpose2D8 for AVX-512 (BW): 16 rows x 64 columns a block
// (x8_transpose_impl.h).
#if defined(__x86_64__)

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12 reports its own AVX-512 headers' undefined-vector idiom (lane extracts) as uninitialized.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <immintrin.h>

#include "linalg/x8_transpose_impl.h"

namespace onyx::linalg {
namespace {

struct Avx512Bytes {
  using T = __m512i;
  static constexpr int kBytes = 64;
  static T Load(const uint8_t* p) { return _mm512_loadu_si512(p); }
  static T UnpackLo(T a, T b) { return _mm512_unpacklo_epi8(a, b); }
  static T UnpackHi(T a, T b) { return _mm512_unpackhi_epi8(a, b); }
  static void StoreLane(uint8_t* p, T v, int lane) {
    __m128i q;
    switch (lane) {
      case 0: q = _mm512_castsi512_si128(v); break;
      case 1: q = _mm512_extracti32x4_epi32(v, 1); break;
      case 2: q = _mm512_extracti32x4_epi32(v, 2); break;
      default: q = _mm512_extracti32x4_epi32(v, 3); break;
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), q);
  }
};

}  // namespace

void Transpose2D8Avx512(const void* in, size_t ld_in, void* out, size_t ld_out, size_t rows, size_t cols) {
  Transpose2D8Impl<Avx512Bytes>(in, ld_in, out, ld_out, rows, cols);
}

}  // namespace onyx::linalg
#endif  // __x86_64__
