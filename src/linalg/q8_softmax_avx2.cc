// Q8SoftmaxRows on AVX2 (q8_softmax.h): the scalar reference's arithmetic, operation for
// operation. A row's table entries come 8 at a time from one gather (the table shifted by the
// row's maximum: AVX2's permutes reach 8 entries, a table has 256); the rows' sums run as
// scalar chains side by side, each in element order; the quotients are rounded by adding and
// subtracting 1.5 * 2^23, as the reference does.
#include <immintrin.h>

#include "linalg/q8_softmax.h"
#include "linalg/q8_softmax_sums.h"

namespace onyx::linalg {

namespace {

// The largest byte of a row, codes compared as unsigned after xor with `flip`.
int RowMax(const uint8_t* x, int64_t D, uint8_t flip) {
  const __m256i vflip = _mm256_set1_epi8(static_cast<char>(flip));
  __m256i vmax = _mm256_setzero_si256();
  int64_t i = 0;
  for (; i + 32 <= D; i += 32)
    vmax = _mm256_max_epu8(vmax, _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i)), vflip));
  __m128i m = _mm_max_epu8(_mm256_castsi256_si128(vmax), _mm256_extracti128_si256(vmax, 1));
  m = _mm_max_epu8(m, _mm_srli_si128(m, 8));
  m = _mm_max_epu8(m, _mm_srli_si128(m, 4));
  m = _mm_max_epu8(m, _mm_srli_si128(m, 2));
  m = _mm_max_epu8(m, _mm_srli_si128(m, 1));
  int mx = _mm_cvtsi128_si32(m) & 0xFF;
  for (; i < D; ++i) mx = (x[i] ^ flip) > mx ? x[i] ^ flip : mx;
  return mx;
}

}  // namespace

bool Q8SoftmaxRowsAvx2(const uint8_t* x, int64_t rows, int64_t D, bool is_signed, const float* exp_table,
                       float y_mult, int32_t zy, float* scratch, uint8_t* y) {
  const uint8_t flip = is_signed ? 0x80 : 0;
  const __m128i vflip = _mm_set1_epi8(static_cast<char>(flip));
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* xr = x + r * D;
    float* er = scratch + r * D;
    const float* shifted = exp_table + (255 - RowMax(xr, D, flip));
    int64_t i = 0;
    for (; i + 8 <= D; i += 8) {
      const __m128i codes = _mm_xor_si128(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(xr + i)), vflip);
      _mm256_storeu_ps(er + i, _mm256_i32gather_ps(shifted, _mm256_cvtepu8_epi32(codes), 4));
    }
    for (; i < D; ++i) er[i] = shifted[xr[i] ^ flip];
  }
  float sum[kQ8SoftmaxRows] = {};
  SumRows(scratch, rows, D, sum);
  for (int64_t r = 0; r < rows; ++r)
    if (!(sum[r] > 0.0f)) return false;
  const __m256 mult = _mm256_set1_ps(y_mult);
  const __m256 magic = _mm256_set1_ps(12582912.0f);  // 1.5 * 2^23
  const __m256i zero_point = _mm256_set1_epi32(zy);
  const int32_t lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255;
  const __m256i vlo = _mm256_set1_epi32(lo), vhi = _mm256_set1_epi32(hi);
  for (int64_t r = 0; r < rows; ++r) {
    const float* er = scratch + r * D;
    uint8_t* yr = y + r * D;
    const __m256 s = _mm256_set1_ps(sum[r]);
    int64_t i = 0;
    for (; i + 8 <= D; i += 8) {
      const __m256 q =
          _mm256_sub_ps(_mm256_add_ps(_mm256_div_ps(_mm256_mul_ps(_mm256_loadu_ps(er + i), mult), s), magic), magic);
      const __m256i v = _mm256_add_epi32(_mm256_cvttps_epi32(q), zero_point);
      const __m256i clamped = _mm256_min_epi32(_mm256_max_epi32(v, vlo), vhi);
      // Eight int32 codes to eight bytes (each fits its type after the clamp).
      const __m128i packed16 = _mm_packs_epi32(_mm256_castsi256_si128(clamped), _mm256_extracti128_si256(clamped, 1));
      const __m128i bytes = is_signed ? _mm_packs_epi16(packed16, packed16) : _mm_packus_epi16(packed16, packed16);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(yr + i), bytes);
    }
    for (; i < D; ++i) {
      const int32_t q = static_cast<int32_t>(((er[i] * y_mult) / sum[r] + 12582912.0f) - 12582912.0f) + zy;
      yr[i] = static_cast<uint8_t>(q < lo ? lo : (q > hi ? hi : q));
    }
  }
  return true;
}

}  // namespace onyx::linalg
