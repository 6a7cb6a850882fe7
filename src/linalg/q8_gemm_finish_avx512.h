// The int8 GEMM's output stage for a full-width (32 columns), untransposed tile in AVX-512
// registers, row by row: the same arithmetic as q8_gemm_output_impl.h's FinishTileBody,
// operation for operation (uint32 wrap, float(acc) * scale then + bias as two roundings, clamp
// then round half to even by 1.5 * 2^23), so the values are identical. Included only by files
// built with the AVX-512 flags (the VNNI and AMX tiles); internal linkage on purpose.
//
// Why: the generic stage stages the tile's rows through arrays on the stack twice; at BERT's
// K = 768 the VNNI tiles ran 3-5% faster with this one. (Making a zero-point term shared by all
// rows or columns once per tile instead of per row measured slower under AMX, so it is not done.)
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "linalg/q8_gemm.h"
#include "linalg/q8_gemm_output_impl.h"

namespace onyx::linalg {
namespace {

// Rows [i0, i0 + rows) of a 32-column untransposed tile (Q8FinishFn's arguments less cols).
// kShareTerms: see `correct` below (the VNNI tile's stage; AMX's measured slower with it at
// 128x3072x768, 20 against 23 % of its peak, faster at 784x128x128, so AMX keeps the plain one).
// load(r, h): the products of row r, columns [16 h, 16 h + 16), from wherever the tile keeps
// them (an acc array below; the VNNI tile's registers, where rows is its constant MR).
template <bool kShareTerms, typename Load>
__attribute__((always_inline)) inline void FinishFullWidthRowsFrom(const Q8Output& out, int64_t k, Load load,
                                                                   int64_t i0, int rows, int64_t j0,
                                                                   const int32_t* row_sums, const int32_t* row_zero,
                                                                   const int32_t* col_sums, const int32_t* col_zero) {
  const __m512i cz[2] = {_mm512_loadu_si512(col_zero + j0), _mm512_loadu_si512(col_zero + j0 + 16)};
  const __m512i cs[2] = {_mm512_loadu_si512(col_sums), _mm512_loadu_si512(col_sums + 16)};
  __m512 sc[2];
  for (int h = 0; h < 2; ++h)
    sc[h] = out.scale == nullptr ? _mm512_set1_ps(1.0f)
            : out.scale_per_column ? _mm512_loadu_ps(out.scale + j0 + 16 * h)
                                   : _mm512_set1_ps(out.scale[0]);
  // v = acc - zb' (sum a' - K za') - za' sum b', half h of row r. vpmulld is two uops on one
  // port, and 32 of them a tile made this stage a fifth of a K = 128 product. kShareTerms: the
  // column term za' sum b' is made once for the tile's first row's za' (all rows share it
  // unless A's zero point is per row), and the row term is skipped where the tile's zb' are all
  // 0 (int8 weights with zero point 0, uint8 ones with 128: most models). Same values,
  // wrap-around included.
  const auto za0 = static_cast<uint32_t>(row_zero[0]);
  const __m512i ct0[2] = {_mm512_mullo_epi32(_mm512_set1_epi32(static_cast<int32_t>(za0)), cs[0]),
                          _mm512_mullo_epi32(_mm512_set1_epi32(static_cast<int32_t>(za0)), cs[1])};
  const bool row_term_zero =
      kShareTerms && _mm512_test_epi32_mask(_mm512_or_si512(cz[0], cz[1]), _mm512_or_si512(cz[0], cz[1])) == 0;
  auto correct = [&](int r, int h) {
    const auto za = static_cast<uint32_t>(row_zero[r]);
    __m512i v = load(r, h);
    if (!row_term_zero) {
      const uint32_t t = static_cast<uint32_t>(row_sums[r]) - static_cast<uint32_t>(k) * za;
      v = _mm512_sub_epi32(v, _mm512_mullo_epi32(cz[h], _mm512_set1_epi32(static_cast<int32_t>(t))));
    }
    const __m512i col_term =
        kShareTerms && za == za0 ? ct0[h] : _mm512_mullo_epi32(_mm512_set1_epi32(static_cast<int32_t>(za)), cs[h]);
    return _mm512_sub_epi32(v, col_term);
  };
  switch (out.kind) {
    case Q8Output::kInt32: {
      auto* c = static_cast<int32_t*>(out.c) + i0 * out.ldc + j0;
#pragma GCC unroll 16
      for (int r = 0; r < rows; ++r)
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) _mm512_storeu_si512(c + r * out.ldc + 16 * h, correct(r, h));
      break;
    }
    case Q8Output::kFloat: {
      __m512 bias[2];
      for (int h = 0; h < 2; ++h)
        bias[h] = out.bias != nullptr ? _mm512_loadu_ps(out.bias + j0 + 16 * h) : _mm512_setzero_ps();
      auto* c = static_cast<float*>(out.c) + i0 * out.ldc + j0;
#pragma GCC unroll 16
      for (int r = 0; r < rows; ++r)
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
          __m512 product = _mm512_mul_ps(_mm512_cvtepi32_ps(correct(r, h)), sc[h]);
          __asm__("" : "+v"(product));  // rounded here: GCC contracts the intrinsics into an fma
          _mm512_storeu_ps(c + r * out.ldc + 16 * h, _mm512_add_ps(product, bias[h]));
        }
      break;
    }
    case Q8Output::kQuantized: {
      __m512i bias[2];
      for (int h = 0; h < 2; ++h)
        bias[h] = out.bias_int != nullptr ? _mm512_loadu_si512(out.bias_int + j0 + 16 * h) : _mm512_setzero_si512();
      const __m512 lo = _mm512_set1_ps((out.out_signed ? -128.0f : 0.0f) - static_cast<float>(out.zero_point));
      const __m512 hi = _mm512_set1_ps((out.out_signed ? 127.0f : 255.0f) - static_cast<float>(out.zero_point));
      const __m512 magic = _mm512_set1_ps(kRoundMagic);
      const __m512i zp = _mm512_set1_epi32(out.zero_point);
      auto* c = static_cast<uint8_t*>(out.c) + i0 * out.ldc + j0;
#pragma GCC unroll 16
      for (int r = 0; r < rows; ++r)
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
          const __m512 x = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(correct(r, h), bias[h])), sc[h]);
          // max_ps(lo, x) is std::max(x, lo) and min_ps(hi, y) std::min(y, hi), NaN cases included.
          const __m512 y = _mm512_min_ps(hi, _mm512_max_ps(lo, x));
          const __m512i q = _mm512_add_epi32(_mm512_cvttps_epi32(_mm512_sub_ps(_mm512_add_ps(y, magic), magic)), zp);
          _mm_storeu_si128(reinterpret_cast<__m128i*>(c + r * out.ldc + 16 * h), _mm512_cvtepi32_epi8(q));
        }
      break;
    }
  }
}

template <bool kShareTerms = false>
inline void FinishFullWidthRows(const Q8Output& out, int64_t k, const int32_t* acc, int nr_stride, int64_t i0,
                                int rows, int64_t j0, const int32_t* row_sums, const int32_t* row_zero,
                                const int32_t* col_sums, const int32_t* col_zero) {
  FinishFullWidthRowsFrom<kShareTerms>(
      out, k, [acc, nr_stride](int r, int h) { return _mm512_loadu_si512(acc + r * nr_stride + 16 * h); }, i0, rows,
      j0, row_sums, row_zero, col_sums, col_zero);
}

}  // namespace
}  // namespace onyx::linalg
