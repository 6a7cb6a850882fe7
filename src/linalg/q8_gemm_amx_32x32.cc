// The AMX int8 GEMM tile: a 32 x 32 int32 block of C as four 16 x 16 accumulator tiles, each step
// of 64 codes of K two A tiles (16 rows x 64 uint8 codes) by two B tiles (16 groups of 4 k x 16
// columns, int8), four TDPBUSD. TDPBUSD multiplies uint8 by int8 and adds groups of four into
// int32 lanes, wrapping like vpdpbusd, so the result equals the AVX-512 VNNI tile's bit for bit.
#if defined(__x86_64__)

// Built with -mamx-tile -mamx-int8 on top of the AVX-512 flags (cmake/onyx_layers.cmake: *_amx*
// files); the chain runs it only where the CPU has AMX-INT8 and Linux granted the tile state.

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <immintrin.h>

#include <cstdint>

#include "linalg/amx_tile_config.h"
#include "linalg/q8_gemm_finish_avx512.h"
#include "linalg/q8_gemm_kernel.h"
#include "linalg/q8_gemm_output_impl.h"

namespace onyx::linalg {
namespace {

constexpr int kMr = 32, kNr = 32, kGroup = 4;
constexpr int kKStep = 64;                 // codes of K a tile row holds
constexpr int kBPanelRow = kNr * kGroup;   // bytes of one k group of the B panel: 128

// Tiles 0-3 hold C, 4-5 A, 6-7 B, all 16 rows of 64 bytes (amx_tile_config.h: loaded per task,
// released after).
void BeginTask() { amx::LoadFullTiles(); }

void EndTask() { amx::ReleaseTiles(); }

// The tile's body: a_row0 / a_row16 address rows 0 and 16 of A, lda bytes a row; steps of 64
// codes of K.
__attribute__((always_inline)) inline void TileBody(int64_t steps, const uint8_t* a_row0, const uint8_t* a_row16,
                                                    int64_t lda, const int8_t* b, int32_t* acc) {
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  for (int64_t s = 0; s < steps; ++s, b += 16 * kBPanelRow) {
    _tile_loadd(4, a_row0 + s * kKStep, lda);
    _tile_loadd(6, b, kBPanelRow);        // columns 0-15
    _tile_loadd(7, b + 64, kBPanelRow);   // columns 16-31
    _tile_dpbusd(0, 4, 6);
    _tile_dpbusd(1, 4, 7);
    _tile_loadd(5, a_row16 + s * kKStep, lda);
    _tile_dpbusd(2, 5, 6);
    _tile_dpbusd(3, 5, 7);
  }
  _tile_stored(0, acc, kNr * 4);
  _tile_stored(1, acc + 16, kNr * 4);
  _tile_stored(2, acc + 16 * kNr, kNr * 4);
  _tile_stored(3, acc + 16 * kNr + 16, kNr * 4);
}

// The packed panel is row-major [kMr][K_padded] (a_rows), K_padded = k_groups * 4, a multiple of 64.
void Tile(int64_t k_groups, const void* a_panel, const void* b_panel, int32_t* acc) {
  const int64_t kp = k_groups * kGroup;
  const auto* a = static_cast<const uint8_t*>(a_panel);
  TileBody(kp / kKStep, a, a + 16 * kp, kp, static_cast<const int8_t*>(b_panel), acc);
}

// A's rows in place (K a multiple of 64: the driver checks k_align).
void TileDirect(int64_t k_groups, const uint8_t* a, int64_t lda, const void* b_panel, int32_t* acc) {
  TileBody(k_groups * kGroup / kKStep, a, a + 16 * lda, lda, static_cast<const int8_t*>(b_panel), acc);
}

// The output stage: full-width untransposed tiles in registers (q8_gemm_finish_avx512.h), others in two halves of 16 rows
// through the generic stage (q8_gemm_output_impl.h stages at most 16).
void Finish(const Q8Output& out, int64_t k, const int32_t* acc, int nr_stride, int64_t i0, int rows, int64_t j0,
            int cols, const int32_t* row_sums, const int32_t* row_zero, const int32_t* col_sums,
            const int32_t* col_zero) {
  if (cols == kNr && !out.transposed) {
    FinishFullWidthRows(out, k, acc, nr_stride, i0, rows, j0, row_sums, row_zero, col_sums, col_zero);
    return;
  }
  for (int h = 0; h < rows; h += 16)
    FinishTile<16, kNr>(out, k, acc + h * nr_stride, nr_stride, i0 + h, std::min(16, rows - h), j0, cols,
                        row_sums + h, row_zero + h, col_sums, col_zero);
}

}  // namespace

const Q8GemmKernel kQ8GemmAmx32x32 = {"amx",       "q8_gemm_amx_32x32", kMr,      kNr,       kGroup, 1, 1,
                                      &Tile,       &Finish,             &TileDirect, kKStep,  true,
                                      "avx512vnni", &BeginTask,         &EndTask};

}  // namespace onyx::linalg
#endif  // __x86_64__
