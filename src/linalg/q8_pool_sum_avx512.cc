// q8_pool_sum.h's sums with AVX-512: 64 codes per vpsadbw (eight 64-bit sums of 8), the last
// block of a plane loaded under a mask (zeros past the end). int8 codes are flipped to uint8
// (x ^ 0x80 = x + 128, the masked-off lanes zeroed again) and 128 per code taken off at the end.
#if defined(__x86_64__)
#include <immintrin.h>

#include <cstdint>

namespace onyx::linalg {

template <bool kSigned>
static void PlaneSums(const uint8_t* x, int64_t planes, int64_t image, int32_t* sums) {
  const __m512i zero = _mm512_setzero_si512(), flip = _mm512_set1_epi8(static_cast<char>(0x80));
  for (int64_t c = 0; c < planes; ++c) {
    const uint8_t* plane = x + c * image;
    __m512i acc = zero;
    for (int64_t p = 0; p < image; p += 64) {
      const __mmask64 m = image - p >= 64 ? ~__mmask64{0} : (__mmask64{1} << (image - p)) - 1;
      __m512i v = _mm512_maskz_loadu_epi8(m, plane + p);
      if (kSigned) v = _mm512_maskz_mov_epi8(m, _mm512_xor_si512(v, flip));
      acc = _mm512_add_epi64(acc, _mm512_sad_epu8(v, zero));
    }
    int64_t s = _mm512_reduce_add_epi64(acc);
    if (kSigned) s -= 128 * image;
    sums[c] = static_cast<int32_t>(s);
  }
}

void Q8PlaneSumsU8Avx512(const uint8_t* x, int64_t planes, int64_t image, int32_t* sums) {
  PlaneSums<false>(x, planes, image, sums);
}

void Q8PlaneSumsS8Avx512(const int8_t* x, int64_t planes, int64_t image, int32_t* sums) {
  PlaneSums<true>(reinterpret_cast<const uint8_t*>(x), planes, image, sums);
}

}  // namespace onyx::linalg
#endif  // __x86_64__
