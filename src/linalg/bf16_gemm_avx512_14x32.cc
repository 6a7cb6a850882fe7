// bf16 GEMM microkernel for AVX-512 BF16: 14 rows x 32 columns, 28 zmm accumulators, two B
// vectors and one broadcast A pair; each vdpbf16ps does 32 multiply-adds (twice an FMA's). The
// file builds with the AVX-512 flags; the functions that use BF16 instructions add that target
// themselves, and run only where bf16_gemm_config.cc found AVX-512 BF16.
#if defined(__x86_64__)

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12 reports its own AVX-512 headers' undefined-vector idiom as (maybe) uninitialized.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <immintrin.h>

#include <algorithm>
#include <utility>

#include "linalg/bf16_gemm.h"
#include "linalg/bf16_gemm_epilogue_avx512.h"
#include "linalg/bf16_gemm_kernel.h"

#define ONYX_BF16_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,fma")))

namespace onyx::linalg {
namespace {

constexpr int kMr = 14;

template <int Rows>
ONYX_BF16_TARGET void TileRows(const Bf16GemmTile& t) {
  __m512 acc0[Rows], acc1[Rows];
  for (int r = 0; r < Rows; ++r) acc0[r] = acc1[r] = _mm512_setzero_ps();
  const uint32_t* a = t.a;
  const uint32_t* b = t.b;
  for (int64_t p = 0; p < t.pairs; ++p, a += kMr, b += kBf16PanelColumns) {
    const __m512bh b0 = (__m512bh)_mm512_loadu_si512(b);
    const __m512bh b1 = (__m512bh)_mm512_loadu_si512(b + 16);
#pragma GCC unroll 14
    for (int r = 0; r < Rows; ++r) {
      const __m512bh av = (__m512bh)_mm512_set1_epi32(static_cast<int>(a[r]));
      acc0[r] = _mm512_dpbf16_ps(acc0[r], av, b0);
      acc1[r] = _mm512_dpbf16_ps(acc1[r], av, b1);
    }
  }
  for (int r = 0; r < Rows; ++r) Bf16StoreRowAvx512(t, r, acc0[r], acc1[r]);
}

template <int... R>
constexpr Bf16GemmTileFn kTiles[] = {&TileRows<R + 1>...};

template <int... R>
constexpr const Bf16GemmTileFn* TileTable(std::integer_sequence<int, R...>) {
  return kTiles<R...>;
}

void Tile(const Bf16GemmTile& t) { TileTable(std::make_integer_sequence<int, kMr>{})[t.mr - 1](t); }

// Transposes a 16 x 16 block of 32-bit values in place (v[r] lane c -> v[c] lane r).
ONYX_BF16_TARGET inline void Transpose16x16(__m512i v[16]) {
  __m512i t[16], u[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_epi32(v[i], v[i + 1]);
    t[i + 1] = _mm512_unpackhi_epi32(v[i], v[i + 1]);
  }
  for (int g = 0; g < 16; g += 4) {  // u[g + q], 128-bit lane L: rows g..g+3 of column 4L + q
    u[g] = _mm512_unpacklo_epi64(t[g], t[g + 2]);
    u[g + 1] = _mm512_unpackhi_epi64(t[g], t[g + 2]);
    u[g + 2] = _mm512_unpacklo_epi64(t[g + 1], t[g + 3]);
    u[g + 3] = _mm512_unpackhi_epi64(t[g + 1], t[g + 3]);
  }
  for (int q = 0; q < 4; ++q) {
    const __m512i s0 = _mm512_shuffle_i32x4(u[q], u[4 + q], 0x88), s1 = _mm512_shuffle_i32x4(u[q], u[4 + q], 0xDD);
    const __m512i w0 = _mm512_shuffle_i32x4(u[8 + q], u[12 + q], 0x88);
    const __m512i w1 = _mm512_shuffle_i32x4(u[8 + q], u[12 + q], 0xDD);
    v[q] = _mm512_shuffle_i32x4(s0, w0, 0x88);
    v[8 + q] = _mm512_shuffle_i32x4(s0, w0, 0xDD);
    v[4 + q] = _mm512_shuffle_i32x4(s1, w1, 0x88);
    v[12 + q] = _mm512_shuffle_i32x4(s1, w1, 0xDD);
  }
}

// Rows 32 floats at a time by vcvtne2ps2bf16 (round to nearest even): 16 pairs of each of the
// panel's rows, transposed in registers so that each pair's 14 rows store as one run (a
// scatter per row cost as much as the products when N is small).
ONYX_BF16_TARGET void ConvertA(bool trans, const float* a, int64_t lda, int64_t k_block, int64_t rows, int64_t k,
                               uint32_t* out) {
  const int64_t pairs = (k + 1) / 2;
  if (trans) {
    for (int64_t i = 0; i < pairs * kMr; ++i) out[i] = 0;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t p = 0; p < pairs; ++p) {
        uint32_t v = RoundToBf16Bits(a[2 * p * lda + r]);
        if (2 * p + 1 < k) v |= static_cast<uint32_t>(RoundToBf16Bits(a[(2 * p + 1) * lda + r])) << 16;
        out[p * kMr + r] = v;
      }
    return;
  }
  constexpr __mmask16 kRowMask = (1u << kMr) - 1u;
  for (int64_t kk = 0; kk < k; kk += 32) {
    const int64_t left = k - kk;
    const __mmask16 m0 = left >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << left) - 1u);
    const __mmask16 m1 = left >= 32 ? 0xFFFF : left <= 16 ? 0 : static_cast<__mmask16>((1u << (left - 16)) - 1u);
    __m512i v[16];
    for (int r = 0; r < 16; ++r) {
      if (r >= rows) {
        v[r] = _mm512_setzero_si512();
        continue;
      }
      const float* src = a + r * lda + (kk / 16) * k_block;  // two 16-float blocks
      const __m512 x0 = _mm512_maskz_loadu_ps(m0, src), x1 = _mm512_maskz_loadu_ps(m1, src + k_block);
      v[r] = (__m512i)_mm512_cvtne2ps_pbh(x1, x0);  // x0 in the low half: pair i = (k 2i, k 2i+1)
    }
    Transpose16x16(v);
    const int64_t p0 = kk / 2, np = std::min<int64_t>(16, pairs - p0);
    for (int64_t i = 0; i < np; ++i) _mm512_mask_storeu_epi32(out + (p0 + i) * kMr, kRowMask, v[i]);
  }
}

}  // namespace

const Bf16GemmKernel kBf16GemmAvx512_14x32 = {"avx512bf16", "bf16_gemm_avx512_14x32", kMr, &Tile, &ConvertA};

}  // namespace onyx::linalg

#endif  // __x86_64__
