// q8_pool_sum.h's sums with AVX2: 32 codes per vpsadbw (four 64-bit sums of 8), then a block of
// 16 and one of 8 where they fit, the last codes of a plane in plain code. int8 codes are flipped
// to uint8 (x ^ 0x80 = x + 128) and 128 per code taken off at the end.
#if defined(__x86_64__)
#include <immintrin.h>

#include <cstdint>

namespace onyx::linalg {

template <bool kSigned>
static void PlaneSums(const uint8_t* x, int64_t planes, int64_t image, int32_t* sums) {
  const __m256i zero = _mm256_setzero_si256(), flip = _mm256_set1_epi8(static_cast<char>(0x80));
  for (int64_t c = 0; c < planes; ++c) {
    const uint8_t* plane = x + c * image;
    __m256i acc = zero;
    int64_t p = 0;
    for (; p + 32 <= image; p += 32) {
      __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(plane + p));
      if (kSigned) v = _mm256_xor_si256(v, flip);
      acc = _mm256_add_epi64(acc, _mm256_sad_epu8(v, zero));
    }
    __m128i half = _mm_add_epi64(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
    // Then one block of 16 and one of 8 where they fit (49 codes: 32 + 16 + 1).
    const __m128i zero16 = _mm256_castsi256_si128(zero), flip16 = _mm256_castsi256_si128(flip);
    if (p + 16 <= image) {
      __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(plane + p));
      if (kSigned) v = _mm_xor_si128(v, flip16);
      half = _mm_add_epi64(half, _mm_sad_epu8(v, zero16));
      p += 16;
    }
    if (p + 8 <= image) {
      __m128i v = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(plane + p));  // upper 8 codes 0
      if (kSigned) v = _mm_xor_si128(v, _mm_move_epi64(flip16));                // flip the low 8 only
      half = _mm_add_epi64(half, _mm_sad_epu8(v, zero16));
      p += 8;
    }
    int64_t s = _mm_cvtsi128_si64(half) + _mm_extract_epi64(half, 1);
    if (kSigned) {
      s -= 128 * p;
      for (; p < image; ++p) s += static_cast<int8_t>(plane[p]);
    } else {
      for (; p < image; ++p) s += plane[p];
    }
    sums[c] = static_cast<int32_t>(s);
  }
}

void Q8PlaneSumsU8Avx2(const uint8_t* x, int64_t planes, int64_t image, int32_t* sums) {
  PlaneSums<false>(x, planes, image, sums);
}

void Q8PlaneSumsS8Avx2(const int8_t* x, int64_t planes, int64_t image, int32_t* sums) {
  PlaneSums<true>(reinterpret_cast<const uint8_t*>(x), planes, image, sums);
}

}  // namespace onyx::linalg
#endif  // __x86_64__
