// bf16 GEMM tile for AMX-BF16: a 32 x 32 float32 block of C as four 16 x 16 accumulator tiles,
// each step of 16 pairs (32 values of K) two A tiles (16 rows x 16 pairs) by two B tiles
// (16 pair rows x 16 columns, read in place from the packed panel: [pairs][32 columns] uint32s
// is a B tile's layout at a stride of 128 bytes), four TDPBF16PS, each 16x the multiply-adds of
// a vdpbf16ps. A is packed as its tiles, K padded to 32 with zeros; the panel's pair rows are
// padded to 16 at pack time (bf16_gemm.h), so the last step reads zeros of its own panel.
// Products of bfloat16s are exact in float32; the hardware sums each pair into the float32
// accumulator (inputs denormal as zero, like vdpbf16ps), so only the summation order and
// rounding of the sums differ from Bf16GemmReference.
#if defined(__x86_64__)

// Built with -mamx-tile -mamx-int8 -mamx-bf16 on top of the AVX-512 flags
// (cmake/onyx_layers.cmake: *_amx_* files); bf16_gemm_config.cc runs it only where the CPU has
// AMX-BF16 and Linux granted the tile state. ConvertA adds AVX-512 BF16 by target attribute.

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "linalg/amx_tile_config.h"
#include "linalg/bf16_gemm.h"
#include "linalg/bf16_gemm_epilogue_avx512.h"
#include "linalg/bf16_gemm_kernel.h"

namespace onyx::linalg {
namespace {

constexpr int kMr = 32;
constexpr int kStepPairs = 16;                              // pairs of K a tile row holds
constexpr int64_t kBRowBytes = kBf16PanelColumns * 4;       // one pair row of the B panel: 128
constexpr int64_t kBStep = kStepPairs * kBf16PanelColumns;  // uint32s of B per step

// Tiles 0-3 hold C (rows 0-15 x columns 0-15, 0-15 x 16-31, 16-31 x 0-15, 16-31 x 16-31), 4-5 A,
// 6-7 B; all 16 rows of 64 bytes (amx_tile_config.h), loaded per task and released after.
void BeginTask() { amx::LoadFullTiles(); }

void EndTask() { amx::ReleaseTiles(); }

constexpr int64_t kATile = 16 * kStepPairs;  // uint32s
constexpr int64_t kARowBytes = kStepPairs * 4;

// The A panel: rows 0-15, then rows 16-31, each as its tiles one after another (a tile: 16 rows
// of 16 pairs, 1 KB), so that each half of A is one sequential stream like B's panel
// (bf16_gemm_bench, BERT's shapes: 3.1-3.4x the SGEMM with A row-major, 3.4-3.7x so). The
// index of pair p of row r:
inline int64_t AIndex(int64_t r, int64_t p, int64_t a_pairs) {
  return (r / 16) * 16 * a_pairs + (p / kStepPairs) * kATile + (r % 16) * kStepPairs + p % kStepPairs;
}

void Tile(const Bf16GemmTile& t) {
  const int64_t steps = (t.pairs + kStepPairs - 1) / kStepPairs, a_pairs = steps * kStepPairs;
  const int64_t a_stride = kARowBytes;
  const uint32_t* a = t.a;
  const uint32_t* b = t.b;
  _tile_zero(0);
  _tile_zero(1);
  if (t.mr > 16) {
    _tile_zero(2);
    _tile_zero(3);
    const uint32_t* a16 = a + 16 * a_pairs;  // rows 16-31
    for (int64_t s = 0; s < steps; ++s, b += kBStep) {
      _tile_loadd(4, a + s * kATile, a_stride);
      _tile_loadd(6, b, kBRowBytes);       // columns 0-15
      _tile_loadd(7, b + 16, kBRowBytes);  // columns 16-31
      _tile_dpbf16ps(0, 4, 6);
      _tile_dpbf16ps(1, 4, 7);
      _tile_loadd(5, a16 + s * kATile, a_stride);
      _tile_dpbf16ps(2, 5, 6);
      _tile_dpbf16ps(3, 5, 7);
    }
  } else {  // rows 16-31 are padding: half the work
    for (int64_t s = 0; s < steps; ++s, b += kBStep) {
      _tile_loadd(4, a + s * kATile, a_stride);
      _tile_loadd(6, b, kBRowBytes);
      _tile_loadd(7, b + 16, kBRowBytes);
      _tile_dpbf16ps(0, 4, 6);
      _tile_dpbf16ps(1, 4, 7);
    }
  }
  // A plain product (MatMul's) of whole tiles: the tiles are C's 16-column blocks as they stand.
  const bool plain = t.alpha == 1.0f && t.beta == 0.0f && t.bias_row == nullptr && t.bias_col == nullptr &&
                     t.residual == nullptr && t.activation == GemmEpilogue::kNone;
  if (plain && t.nr == kBf16PanelColumns && (t.mr == 16 || t.mr == kMr)) {
    const int64_t c_stride = t.ldc * static_cast<int64_t>(sizeof(float));
    _tile_stored(0, t.c, c_stride);
    _tile_stored(1, t.c + t.c_block, c_stride);
    if (t.mr == kMr) {
      _tile_stored(2, t.c + 16 * t.ldc, c_stride);
      _tile_stored(3, t.c + 16 * t.ldc + t.c_block, c_stride);
    }
    return;
  }
  alignas(64) float acc[kMr * kBf16PanelColumns];
  if (t.mr > 16) {
    _tile_stored(2, acc + 16 * kBf16PanelColumns, kBRowBytes);
    _tile_stored(3, acc + 16 * kBf16PanelColumns + 16, kBRowBytes);
  }
  _tile_stored(0, acc, kBRowBytes);
  _tile_stored(1, acc + 16, kBRowBytes);
  for (int r = 0; r < t.mr; ++r)
    Bf16StoreRowAvx512(t, r, _mm512_load_ps(acc + r * kBf16PanelColumns),
                       _mm512_load_ps(acc + r * kBf16PanelColumns + 16));
}

// The A panel as tiles (AIndex), P = ceil(k / 32) * 16 pairs a row. Untransposed
// rows convert 32 floats at a time by vcvtne2ps2bf16 (nearest even); transposed A (Gemm's
// transA, rare) goes value by value.
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16"))) void ConvertA(
    bool trans, const float* a, int64_t lda, int64_t k_block, int64_t rows, int64_t k, uint32_t* out) {
  const int64_t pairs = (k + 1) / 2, a_pairs = (pairs + kStepPairs - 1) / kStepPairs * kStepPairs;
  if (trans) {
    std::fill(out, out + kMr * a_pairs, 0u);
    for (int64_t p = 0; p < pairs; ++p)
      for (int64_t r = 0; r < rows; ++r) {
        uint32_t v = RoundToBf16Bits(a[2 * p * lda + r]);
        if (2 * p + 1 < k) v |= static_cast<uint32_t>(RoundToBf16Bits(a[(2 * p + 1) * lda + r])) << 16;
        out[AIndex(r, p, a_pairs)] = v;
      }
    return;
  }
  for (int64_t r = 0; r < kMr; ++r) {
    uint32_t* dst = out + AIndex(r, 0, a_pairs);  // then one tile (kATile) per 16 pairs
    if (r >= rows) {
      for (int64_t p = 0; p < a_pairs; p += kStepPairs) std::fill(dst + p * 16, dst + p * 16 + kStepPairs, 0u);
      continue;
    }
    for (int64_t kk = 0; kk < k; kk += 32) {
      const int64_t left = k - kk;
      const __mmask16 m0 = left >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << left) - 1u);
      const __mmask16 m1 = left >= 32 ? 0xFFFF : left <= 16 ? 0 : static_cast<__mmask16>((1u << (left - 16)) - 1u);
      const float* src = a + r * lda + (kk / 16) * k_block;  // two 16-float blocks
      const __m512 x0 = _mm512_maskz_loadu_ps(m0, src), x1 = _mm512_maskz_loadu_ps(m1, src + k_block);
      _mm512_storeu_si512(dst + (kk / 32) * kATile, (__m512i)_mm512_cvtne2ps_pbh(x1, x0));  // pair i = (k 2i, k 2i+1)
    }
  }
}

}  // namespace

const Bf16GemmKernel kBf16GemmAmx32x32 = {"amx",      "bf16_gemm_amx_32x32", kMr, &Tile, &ConvertA, kStepPairs,
                                          &BeginTask, &EndTask};

}  // namespace onyx::linalg
#endif  // __x86_64__
