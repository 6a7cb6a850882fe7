// AMX tile configuration for kernels that use all eight tiles as 16 rows of 64 bytes (palette 1).
// Include only from *_amx_*.cc files (built with -mamx-tile). Each task loads the configuration
// anew (a thread-local "configured" flag would trust that no other library, ONNX Runtime's MLAS
// in the same process say, loaded its own since) and releases the tiles after, so threads that
// are not multiplying carry no tile state through context switches and signal frames.
#pragma once

#if defined(__x86_64__)

#include <immintrin.h>

#include <cstdint>

namespace onyx::linalg::amx {

// LDTILECFG's 64-byte operand.
struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

// Tiles 0-7: 16 rows x 64 bytes each.
inline void LoadFullTiles() {
  TileConfig cfg;
  for (int t = 0; t < 8; ++t) cfg.colsb[t] = 64, cfg.rows[t] = 16;
  // Not _tile_loadconfig: GCC 12's macro names only the operand's first 8 bytes as read, and the
  // stores above were dropped as dead.
  __asm__ volatile("ldtilecfg %0" : : "m"(cfg));
}

inline void ReleaseTiles() { _tile_release(); }

}  // namespace onyx::linalg::amx

#endif  // __x86_64__
