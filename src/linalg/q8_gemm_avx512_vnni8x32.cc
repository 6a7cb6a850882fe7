// The AVX-512 VNNI int8 GEMM tile: vpdpbusd multiplies 4 uint8 codes of A (broadcast) by 4 int8
// codes of each of 16 B columns and adds them into int32 lanes, exactly (no int16 step).
#if defined(__x86_64__)

// Built with -mavx512vnni on top of the AVX-512 flags (cmake/onyx_layers.cmake: *_avx512_vnni*
// files); the chain runs it only where the CPU reports avx512_vnni.

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12 reports its own AVX-512 headers' undefined-vector idiom as maybe uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "linalg/q8_gemm_finish_avx512.h"
#include "linalg/q8_gemm_kernel.h"
#include "linalg/q8_gemm_output_impl.h"

namespace onyx::linalg {
namespace {

constexpr int kMr = 8, kNr = 32, kGroup = 4;

// The tile's body, whatever A's layout: quad(r, g) reads row r's 4 codes of k group g. Both
// tiles below are this loop, inlined into each; only how A is addressed differs.
template <typename Quad>
__attribute__((always_inline)) inline void TileProducts(int64_t k_groups, Quad quad, const int8_t* b,
                                                        __m512i (&c)[kMr][2]) {
#pragma GCC unroll 8
  for (int r = 0; r < kMr; ++r) c[r][0] = c[r][1] = _mm512_setzero_si512();
  // Unrolled by 8: 2-4 % faster than by 4 at BERT's shapes, 2-5 % at K = 128 (16 unrolls: no better).
#pragma GCC unroll 8
  for (int64_t g = 0; g < k_groups; ++g, b += kNr * kGroup) {
    const __m512i b0 = _mm512_load_si512(b);
    const __m512i b1 = _mm512_load_si512(b + 64);
#pragma GCC unroll 8
    for (int r = 0; r < kMr; ++r) {
      const __m512i av = _mm512_set1_epi32(quad(r, g));
      c[r][0] = _mm512_dpbusd_epi32(c[r][0], av, b0);
      c[r][1] = _mm512_dpbusd_epi32(c[r][1], av, b1);
    }
  }
}

template <typename Quad>
__attribute__((always_inline)) inline void TileBody(int64_t k_groups, Quad quad, const int8_t* b, int32_t* acc) {
  __m512i c[kMr][2];
  TileProducts(k_groups, quad, b, c);
#pragma GCC unroll 8
  for (int r = 0; r < kMr; ++r) {
    _mm512_storeu_si512(acc + r * kNr, c[r][0]);
    _mm512_storeu_si512(acc + r * kNr + 16, c[r][1]);
  }
}

inline int32_t Quad(const uint8_t* p) {
  int32_t quad;
  std::memcpy(&quad, p, sizeof(quad));
  return quad;
}

// The packed panel: k group g of all kMr rows is kMr * 4 consecutive codes.
void Tile(int64_t k_groups, const void* a_panel, const void* b_panel, int32_t* acc) {
  const auto* a = static_cast<const uint8_t*>(a_panel);
  TileBody(k_groups, [a](int r, int64_t g) { return Quad(a + (g * kMr + r) * kGroup); },
           static_cast<const int8_t*>(b_panel), acc);
}

// quad(r, g) with A's rows read where they are (row r at a + r lda).
inline auto RowsInPlace(const uint8_t* a, int64_t lda) {
  return [a, lda](int r, int64_t g) { return Quad(a + r * lda + g * kGroup); };
}

// Tile with A's rows read where they are (Q8TileDirectFn): one pointer a row, each broadcast the
// row's next 4 codes, as the packed panel would hold them.
void TileDirect(int64_t k_groups, const uint8_t* a, int64_t lda, const void* b_panel, int32_t* acc) {
  TileBody(k_groups, RowsInPlace(a, lda), static_cast<const int8_t*>(b_panel), acc);
}

// The output stage: full-width untransposed tiles in registers (q8_gemm_finish_avx512.h), others
// through the generic stage.
void Finish(const Q8Output& out, int64_t k, const int32_t* acc, int nr_stride, int64_t i0, int rows, int64_t j0,
            int cols, const int32_t* row_sums, const int32_t* row_zero, const int32_t* col_sums,
            const int32_t* col_zero) {
  if (cols == kNr && !out.transposed) {
    FinishFullWidthRows<true>(out, k, acc, nr_stride, i0, rows, j0, row_sums, row_zero, col_sums, col_zero);
    return;
  }
  FinishTile<kMr, kNr>(out, k, acc, nr_stride, i0, rows, j0, cols, row_sums, row_zero, col_sums, col_zero);
}

// TileDirect and the full-width stage in one function (Q8TileDirectFinishFn).
void TileDirectFinish(int64_t k_groups, const uint8_t* a, int64_t lda, const void* b_panel, const Q8Output& out,
                      int64_t k, int64_t i0, int64_t j0, const int32_t* row_sums, const int32_t* row_zero,
                      const int32_t* col_sums, const int32_t* col_zero) {
  __m512i c[kMr][2];
  TileProducts(k_groups, RowsInPlace(a, lda), static_cast<const int8_t*>(b_panel), c);
  FinishFullWidthRowsFrom<true>(out, k, [&c](int r, int h) { return c[r][h]; }, i0, kMr, j0, row_sums, row_zero,
                                col_sums, col_zero);
}

}  // namespace

const Q8GemmKernel kQ8GemmAvx512Vnni8x32 = {"avx512vnni", "q8_gemm_avx512vnni_8x32", kMr, kNr, kGroup, 1, 1, &Tile,
                                            &Finish, &TileDirect, 0, false, nullptr, nullptr, nullptr,
                                            &TileDirectFinish};

}  // namespace onyx::linalg
#endif  // __x86_64__
