// The portable int8 GEMM tile: uint8 A x int8 B in groups of 4 codes (the AVX-512 VNNI layout).
#include <cstdint>

#include "linalg/q8_gemm_kernel.h"
#include "linalg/q8_gemm_output_impl.h"

namespace onyx::linalg {
namespace {

constexpr int kMr = 4, kNr = 16, kGroup = 4;

void Tile(int64_t k_groups, const void* a_panel, const void* b_panel, int32_t* acc) {
  const auto* a = static_cast<const uint8_t*>(a_panel);
  const auto* b = static_cast<const int8_t*>(b_panel);
  int32_t c[kMr][kNr] = {};
  for (int64_t g = 0; g < k_groups; ++g, a += kMr * kGroup, b += kNr * kGroup)
    for (int r = 0; r < kMr; ++r)
      for (int j = 0; j < kNr; ++j) {
        int32_t s = 0;  // at most 4 * 255 * 128: no overflow within a group
        for (int q = 0; q < kGroup; ++q) s += a[r * kGroup + q] * b[j * kGroup + q];
        c[r][j] = static_cast<int32_t>(static_cast<uint32_t>(c[r][j]) + static_cast<uint32_t>(s));
      }
  for (int r = 0; r < kMr; ++r)
    for (int j = 0; j < kNr; ++j) acc[r * kNr + j] = c[r][j];
}

// Tile on A's rows in place (Q8TileDirectFn), so the driver's unpacked-A path runs on every
// machine, not only where VNNI is.
void TileDirect(int64_t k_groups, const uint8_t* a, int64_t lda, const void* b_panel, int32_t* acc) {
  const auto* b = static_cast<const int8_t*>(b_panel);
  int32_t c[kMr][kNr] = {};
  for (int64_t g = 0; g < k_groups; ++g, b += kNr * kGroup)
    for (int r = 0; r < kMr; ++r)
      for (int j = 0; j < kNr; ++j) {
        int32_t s = 0;
        for (int q = 0; q < kGroup; ++q) s += a[r * lda + g * kGroup + q] * b[j * kGroup + q];
        c[r][j] = static_cast<int32_t>(static_cast<uint32_t>(c[r][j]) + static_cast<uint32_t>(s));
      }
  for (int r = 0; r < kMr; ++r)
    for (int j = 0; j < kNr; ++j) acc[r * kNr + j] = c[r][j];
}

}  // namespace

const Q8GemmKernel kQ8GemmScalar4x16 = {
    "scalar", "q8_gemm_scalar_4x16", kMr, kNr, kGroup, 1, 1, &Tile, &FinishTile<kMr, kNr>, &TileDirect};

}  // namespace onyx::linalg
