// Q8SoftmaxRows on AVX-512 (q8_softmax.h): the scalar reference's arithmetic, operation for
// operation. A row's table entries come 16 at a time from two-register permutes of the table's
// 32-entry blocks, only the blocks its codes reach (a gather cost more on Zen 4); the rows' sums
// run as scalar chains side by side, each in element order; the quotients are rounded by adding
// and subtracting 1.5 * 2^23, as the reference does.
#if defined(__GNUC__) && !defined(__clang__)
// GCC 12 reports its own AVX-512 headers' undefined-vector idiom as (maybe) uninitialized.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <immintrin.h>

#include "linalg/q8_softmax.h"
#include "linalg/q8_softmax_sums.h"

namespace onyx::linalg {

namespace {

// The smallest and largest byte of a row, codes compared as unsigned after xor with `flip`.
struct ByteRange {
  int lo, hi;
};

ByteRange RowRange(const uint8_t* x, int64_t D, __m512i flip) {
  __m512i vmax = _mm512_setzero_si512(), vmin = _mm512_set1_epi8(-1);
  int64_t i = 0;
  for (; i + 64 <= D; i += 64) {
    const __m512i v = _mm512_xor_si512(_mm512_loadu_si512(x + i), flip);
    vmax = _mm512_max_epu8(vmax, v);
    vmin = _mm512_min_epu8(vmin, v);
  }
  if (i < D) {
    const __mmask64 m = (uint64_t{1} << (D - i)) - 1;
    const __m512i v = _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, x + i), flip);
    vmax = _mm512_mask_max_epu8(vmax, m, vmax, v);
    vmin = _mm512_mask_min_epu8(vmin, m, vmin, v);
  }
  const __m256i h = _mm256_max_epu8(_mm512_castsi512_si256(vmax), _mm512_extracti64x4_epi64(vmax, 1));
  const __m256i l = _mm256_min_epu8(_mm512_castsi512_si256(vmin), _mm512_extracti64x4_epi64(vmin, 1));
  __m128i hi = _mm_max_epu8(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
  __m128i lo = _mm_min_epu8(_mm256_castsi256_si128(l), _mm256_extracti128_si256(l, 1));
  hi = _mm_max_epu8(hi, _mm_srli_si128(hi, 8));
  lo = _mm_min_epu8(lo, _mm_srli_si128(lo, 8));
  hi = _mm_max_epu8(hi, _mm_srli_si128(hi, 4));
  lo = _mm_min_epu8(lo, _mm_srli_si128(lo, 4));
  hi = _mm_max_epu8(hi, _mm_srli_si128(hi, 2));
  lo = _mm_min_epu8(lo, _mm_srli_si128(lo, 2));
  hi = _mm_max_epu8(hi, _mm_srli_si128(hi, 1));
  lo = _mm_min_epu8(lo, _mm_srli_si128(lo, 1));
  return {_mm_cvtsi128_si32(lo) & 0xFF, _mm_cvtsi128_si32(hi) & 0xFF};
}

// Table entries for 16 indices j whose 32-entry blocks (j / 32) are kFirst or above: one
// two-register permute per block, from the top block down, each lane keeping the last block at
// or above its own index's.
template <int kFirst>
__m512 Lookup(const float* table, __m512i j) {
  __m512 e = _mm512_permutex2var_ps(_mm512_loadu_ps(table + 224), j, _mm512_loadu_ps(table + 240));
#pragma GCC unroll 8
  for (int k = 6; k >= kFirst; --k) {
    const __mmask16 in_block = _mm512_cmplt_epi32_mask(j, _mm512_set1_epi32(32 * (k + 1)));
    const __m512 lo = _mm512_loadu_ps(table + 32 * k), hi = _mm512_loadu_ps(table + 32 * k + 16);
    const __m512 block = _mm512_permutex2var_ps(lo, j, hi);
    e = _mm512_mask_mov_ps(e, in_block, block);
  }
  return e;
}

// A row's entries, er[i] = table[(x[i] xor flip) + offset], from the table's blocks kFirst to 7.
template <int kFirst>
void RowEntries(const uint8_t* x, int64_t D, __m128i flip, int offset, const float* table, float* er) {
  const __m512i off = _mm512_set1_epi32(offset);
  auto index = [&](__m128i codes) { return _mm512_add_epi32(_mm512_cvtepu8_epi32(_mm_xor_si128(codes, flip)), off); };
  int64_t i = 0;
  for (; i + 16 <= D; i += 16) {
    const __m128i codes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i));
    _mm512_storeu_ps(er + i, Lookup<kFirst>(table, index(codes)));
  }
  if (i < D) {
    const __mmask16 m = static_cast<__mmask16>((1u << (D - i)) - 1);
    _mm512_mask_storeu_ps(er + i, m, Lookup<kFirst>(table, index(_mm_maskz_loadu_epi8(m, x + i))));
  }
}

using RowEntriesFn = void (*)(const uint8_t*, int64_t, __m128i, int, const float*, float*);
constexpr RowEntriesFn kRowEntries[8] = {&RowEntries<0>, &RowEntries<1>, &RowEntries<2>, &RowEntries<3>,
                                         &RowEntries<4>, &RowEntries<5>, &RowEntries<6>, &RowEntries<7>};

}  // namespace

bool Q8SoftmaxRowsAvx512(const uint8_t* x, int64_t rows, int64_t D, bool is_signed, const float* exp_table,
                         float y_mult, int32_t zy, float* scratch, uint8_t* y) {
  const __m512i flip = _mm512_set1_epi8(is_signed ? static_cast<char>(0x80) : 0);
  // Each row's table entries: index 255 - (max - code), so the blocks of the table a row needs
  // are those from its smallest code's.
  for (int64_t r = 0; r < rows; ++r) {
    const ByteRange range = RowRange(x + r * D, D, flip);
    const int offset = 255 - range.hi;
    kRowEntries[(range.lo + offset) / 32](x + r * D, D, _mm512_castsi512_si128(flip), offset, exp_table,
                                          scratch + r * D);
  }
  // The sums, each row's in element order: scalar chains of up to 8 rows side by side (a gather
  // per column, the rows in the lanes, cost more than the loads on Zen 4).
  float sum[kQ8SoftmaxRows] = {};
  SumRows(scratch, rows, D, sum);
  // A row whose sum is not positive (zero, or NaN) goes to the caller's general loop.
  for (int64_t r = 0; r < rows; ++r)
    if (!(sum[r] > 0.0f)) return false;
  const __m512 mult = _mm512_set1_ps(y_mult);
  const __m512 magic = _mm512_set1_ps(12582912.0f);  // 1.5 * 2^23
  const __m512i zero_point = _mm512_set1_epi32(zy);
  const __m512i lo = _mm512_set1_epi32(is_signed ? -128 : 0), hi = _mm512_set1_epi32(is_signed ? 127 : 255);
  auto codes = [&](__m512 e, __m512 s) {
    const __m512 q = _mm512_sub_ps(_mm512_add_ps(_mm512_div_ps(_mm512_mul_ps(e, mult), s), magic), magic);
    const __m512i v = _mm512_add_epi32(_mm512_cvttps_epi32(q), zero_point);
    return _mm512_cvtepi32_epi8(_mm512_min_epi32(_mm512_max_epi32(v, lo), hi));
  };
  for (int64_t r = 0; r < rows; ++r) {
    const float* er = scratch + r * D;
    uint8_t* yr = y + r * D;
    const __m512 s = _mm512_set1_ps(sum[r]);
    int64_t i = 0;
    for (; i + 16 <= D; i += 16)
      _mm_storeu_si128(reinterpret_cast<__m128i*>(yr + i), codes(_mm512_loadu_ps(er + i), s));
    if (i < D) {
      const __mmask16 m = static_cast<__mmask16>((1u << (D - i)) - 1);
      _mm_mask_storeu_epi8(yr + i, m, codes(_mm512_maskz_loadu_ps(m, er + i), s));
    }
  }
  return true;
}

}  // namespace onyx::linalg
