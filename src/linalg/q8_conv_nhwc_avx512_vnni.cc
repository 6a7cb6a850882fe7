// The direct channels-last int8 convolution (q8_conv_nhwc.h) on AVX-512 VNNI: tiles of 6 output
// pixels by 64 output channels (24 accumulators). For each tap of the window, each pixel's row of
// C codes is read in place: vpdpbusd multiplies 4 of its codes (one broadcast) by 4 codes of each
// of 64 channels' weights (4 vectors, one weight panel) into int32 lanes, exactly. A tile's rows
// start from x's zero point through the weights' sums and the bias, and are finished in registers
// (scale, clamp, round half to even, zero point), each stored as one run of 64 channels of the
// channels-last output.
#if defined(__x86_64__)

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12 reports its own AVX-512 headers' undefined-vector idiom as maybe uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "base/int_math.h"
#include "linalg/q8_conv_nhwc.h"
#include "linalg/q8_conv_nhwc_avx512_vnni.h"
#include "linalg/q8_conv_nhwc_tile.h"
#include "linalg/q8_conv_nhwc_window.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {

using namespace q8_nhwc;

namespace {
bool lut_in_registers = true;  // Q8ConvNhwcLutInRegisters
}  // namespace

void Q8ConvNhwcLutInRegisters(bool allowed) { lut_in_registers = allowed; }

bool Q8ConvNhwcLutInTile(const uint8_t* lut) {
  return lut != nullptr && lut_in_registers && __builtin_cpu_supports("avx512vbmi");
}

void Q8ConvNhwcAvx512Vnni(const PackedQ8Nhwc& w, const Q8ConvNhwcShape& s, const void* image, bool x_signed,
                          int32_t x_zero, const Q8Output& out, ThreadPool* pool, const uint8_t* lut,
                          const Q8ConvAddend* add) {
  const int64_t pixels = s.oh * s.ow, m = w.m(), c = w.channels(), taps = w.taps(), groups = c / 4;
  if (pixels <= 0) return;
  const Q8NhwcTapRows tap_rows(s, static_cast<const uint8_t*>(image), c, x_zero);
  const int64_t panels = CeilDiv(m, kPanel), tiles = CeilDiv(pixels, int64_t{kRows});
  const int64_t blocks = CeilDiv(tiles, kTilesPerTask);
  // Stored x codes: int8 + 128, its zero point too; acc - zx' * sum_k w' is the exact result.
  const int32_t zx = x_zero + (x_signed ? 128 : 0);
  // Small weights (all panels stay in L2): a thread runs every panel of a pixel block in turn,
  // so each output row is finished while in L1 (panel by panel, the output of a 56x56 map with
  // 256 channels, 800 KB, was evicted between the sweeps: 1.2x the time). Large weights: a panel
  // stays while the thread runs its pixel blocks.
  const bool by_block = panels * taps * groups * kPanel * 4 <= (int64_t{256} << 10);
  // A table where the CPU has VBMI: looked up in registers; else after each tile, in memory.
  const bool lut_in_tile = Q8ConvNhwcLutInTile(lut);
  const double cost = 2.0 * kRows * kTilesPerTask * static_cast<double>(taps * c * kPanel);
  ThreadPool::For(pool, panels * blocks, cost, [&](int64_t t0, int64_t t1) {
    std::vector<const uint8_t*> ptr(static_cast<size_t>(taps * kRows));
    for (int64_t task = t0; task < t1; ++task) {
      const int64_t panel = by_block ? task % panels : task / blocks;
      const int64_t block = by_block ? task / panels : task % blocks;
      const int64_t m0 = panel * kPanel;
      const int nv = static_cast<int>(std::min<int64_t>(4, CeilDiv(m - m0, int64_t{16})));
      const TileFn tile = lut_in_tile   ? PickTileLut(nv, x_signed, out.out_signed)
                          : add != nullptr ? PickTileOf<Post::kAdd>(nv, x_signed, out.out_signed)
                                           : PickTileOf<Post::kNone>(nv, x_signed, out.out_signed);
      const int8_t* wp = w.data() + panel * taps * groups * kPanel * 4;
      const Epilogue e = MakeEpilogue(w, out, m0, zx, lut_in_tile ? lut : nullptr, add);
      const int64_t valid = std::min<int64_t>(kPanel, m - m0);
      const int64_t tile1 = std::min(tiles, (block + 1) * kTilesPerTask);
      for (int64_t ti = block * kTilesPerTask; ti < tile1; ++ti) {
        const int64_t p0 = ti * kRows;
        const int rows = static_cast<int>(std::min<int64_t>(kRows, pixels - p0));
        tap_rows.Gather(p0, rows, kRows, ptr.data());
        uint8_t* rows_out[kRows];
        const uint8_t* rows_other[kRows] = {};
        for (int r = 0; r < kRows; ++r)
          rows_out[r] = static_cast<uint8_t*>(out.c) + (p0 + std::min(r, rows - 1)) * out.ldc + m0;
        for (int r = 0; r < kRows && add != nullptr; ++r)
          rows_other[r] = static_cast<const uint8_t*>(add->other) + (p0 + std::min(r, rows - 1)) * add->ldo + m0;
        tile(ptr.data(), taps, groups, wp, e, rows_out, rows_other, rows);
        if (lut != nullptr && !lut_in_tile)
          for (int r = 0; r < rows; ++r)
            for (int64_t ch = 0; ch < valid; ++ch) rows_out[r][ch] = lut[rows_out[r][ch]];
      }
    }
  });
}

}  // namespace onyx::linalg
#endif  // __x86_64__
