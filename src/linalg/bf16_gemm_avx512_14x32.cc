// bf16 GEMM microkernel for AVX-512 BF16: 14 rows x 32 columns, 28 zmm accumulators, two B
// vectors and one broadcast A pair; each vdpbf16ps does 32 multiply-adds (twice an FMA's). The
// file builds with the AVX-512 flags; the functions that use BF16 instructions add that target
// themselves, and run only where bf16_gemm_config.cc found AVX-512 BF16.
#if defined(__x86_64__)

#include <immintrin.h>

#include <algorithm>
#include <utility>

#include "linalg/bf16_gemm.h"
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
  const __m512 alpha = _mm512_set1_ps(t.alpha), beta = _mm512_set1_ps(t.beta);
  const __m512 zero = _mm512_setzero_ps();
  const __m512 lo = _mm512_set1_ps(t.act_alpha), hi = _mm512_set1_ps(t.act_beta);
  const bool vector_act = t.activation == GemmEpilogue::kNone || t.activation == GemmEpilogue::kRelu ||
                          t.activation == GemmEpilogue::kClip || t.activation == GemmEpilogue::kLeakyRelu;
  for (int r = 0; r < Rows; ++r) {
    for (int h = 0; h < 2; ++h) {
      const int cols = std::min(16, t.nr - 16 * h);
      if (cols <= 0) break;
      const __mmask16 mask = static_cast<__mmask16>((1u << cols) - 1u);
      float* c = t.c + r * t.ldc + 16 * h;
      __m512 v = _mm512_mul_ps(h == 0 ? acc0[r] : acc1[r], alpha);
      if (t.beta != 0.0f) v = _mm512_fmadd_ps(beta, _mm512_mask_loadu_ps(zero, mask, c), v);
      if (t.bias_row) v = _mm512_add_ps(v, _mm512_set1_ps(t.bias_row[r]));
      if (t.bias_col) v = _mm512_add_ps(v, _mm512_mask_loadu_ps(zero, mask, t.bias_col + 16 * h));
      if (t.residual) v = _mm512_add_ps(v, _mm512_mask_loadu_ps(zero, mask, t.residual + r * t.ldr + 16 * h));
      switch (t.activation) {
        case GemmEpilogue::kRelu: v = _mm512_max_ps(v, zero); break;
        case GemmEpilogue::kClip: v = _mm512_min_ps(_mm512_max_ps(v, lo), hi); break;
        case GemmEpilogue::kLeakyRelu:
          v = _mm512_mask_mul_ps(v, _mm512_cmp_ps_mask(v, zero, _CMP_LT_OQ), v, lo);
          break;
        default: break;
      }
      _mm512_mask_storeu_ps(c, mask, v);
      if (!vector_act)
        for (int j = 0; j < cols; ++j) c[j] = Bf16EpilogueActivation(c[j], t.activation, t.act_alpha, t.act_beta);
    }
  }
}

template <int... R>
constexpr Bf16GemmTileFn kTiles[] = {&TileRows<R + 1>...};

template <int... R>
constexpr const Bf16GemmTileFn* TileTable(std::integer_sequence<int, R...>) {
  return kTiles<R...>;
}

void Tile(const Bf16GemmTile& t) { TileTable(std::make_integer_sequence<int, kMr>{})[t.mr - 1](t); }

// Rows 32 floats at a time by vcvtne2ps2bf16 (round to nearest even), scattered into the
// panel's row slot.
ONYX_BF16_TARGET void ConvertA(bool trans, const float* a, int64_t lda, int64_t rows, int64_t k, uint32_t* out) {
  const int64_t pairs = (k + 1) / 2;
  if (rows < kMr || trans)
    for (int64_t i = 0; i < pairs * kMr; ++i) out[i] = 0;
  if (trans) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t p = 0; p < pairs; ++p) {
        uint32_t v = RoundToBf16Bits(a[2 * p * lda + r]);
        if (2 * p + 1 < k) v |= static_cast<uint32_t>(RoundToBf16Bits(a[(2 * p + 1) * lda + r])) << 16;
        out[p * kMr + r] = v;
      }
    return;
  }
  const __m512i index = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                           _mm512_set1_epi32(kMr));
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = a + r * lda;
    for (int64_t kk = 0; kk < k; kk += 32) {
      const int64_t left = k - kk;
      const __mmask16 m0 = left >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << left) - 1u);
      const __mmask16 m1 = left >= 32 ? 0xFFFF : left <= 16 ? 0 : static_cast<__mmask16>((1u << (left - 16)) - 1u);
      const __m512 x0 = _mm512_maskz_loadu_ps(m0, row + kk), x1 = _mm512_maskz_loadu_ps(m1, row + kk + 16);
      const __m512i bf = (__m512i)_mm512_cvtne2ps_pbh(x1, x0);  // x0 in the low half
      const int64_t p0 = kk / 2, np = std::min<int64_t>(16, pairs - p0);
      const __mmask16 pm = np >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << np) - 1u);
      _mm512_mask_i32scatter_epi32(out + p0 * kMr + r, pm, index, bf, 4);
    }
  }
}

}  // namespace

const Bf16GemmKernel kBf16GemmAvx512_14x32 = {"avx512bf16", "bf16_gemm_avx512_14x32", kMr, &Tile, &ConvertA};

}  // namespace onyx::linalg

#endif  // __x86_64__
