// The direct channels-last int8 convolution (q8_conv_nhwc.h) on AMX tiles: blocks of 32 output
// pixels by 32 output channels, four 16 x 16 int32 accumulator tiles. Each step of 64 input codes
// (one tap, one chunk of C) is two A tiles (16 pixels' 64 codes each) by two B tiles (16 groups of
// 4 codes x 16 channels), four TDPBUSD, which multiply uint8 by int8 into wrapping int32 lanes as
// vpdpbusd does: the sums, and so the codes (the VNNI kernel's own epilogue finishes them,
// q8_conv_nhwc_tile.h), equal the AVX-512 VNNI kernel's bit for bit.
//
// A (int8 codes + 128, zero-point codes in the padding, zeros past C): a pointwise conv's pixels
// are rows of the image at stride C, loaded in place (C a multiple of 64, or below 64: then the A
// tiles are C bytes wide and the B tiles C / 4 rows, so nothing past C is read); other unit-stride
// convs read a padded copy of the image (the canvas) in which every tap of 16 neighbouring pixels
// is at one stride; strided convs stage each block's window rows, [taps][chunks][32 pixels][64
// codes], once for every output channel. B: the packed panel [taps][C / 4][64][4] is already a
// tile's layout (a tile of 16 channels is 16 groups of 64 bytes at stride 256); past C the tile
// reads the next groups (PackedQ8Nhwc keeps slack after its last panel), which meet zeros in A.
#if defined(__x86_64__)

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12 reports its own AVX-512 headers' undefined-vector idiom as maybe uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "base/int_math.h"
#include "linalg/amx_tile_config.h"
#include "linalg/q8_conv_nhwc.h"
#include "linalg/q8_conv_nhwc_amx.h"
#include "linalg/q8_conv_nhwc_avx512_vnni.h"
#include "linalg/q8_conv_nhwc_tile.h"
#include "linalg/q8_conv_nhwc_window.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {

using namespace q8_nhwc;

namespace {

constexpr int kBlock = 32;                       // output pixels of a block: two A tiles
constexpr int kStep = 64;                        // input codes of a tile row: 16 groups of 4
constexpr int64_t kGroupRow = kPanel * 4;        // bytes of one group of 4 codes in a weight panel
// Staged bytes a task keeps: within L1 where the weights stay in L2 (each step's A tiles then come
// from L1, only B from L2), else up to half of L2, so each panel of the weights, read from
// further out, serves several blocks.
constexpr int64_t kStageL1 = int64_t{40} << 10, kStageL2 = int64_t{512} << 10;
constexpr int64_t kWeightsInL2 = int64_t{1} << 20;

// Columns [32 half, 32 half + 32) of the panel for the block's 32 pixels into acc [32][kPanel].
// Step (t, k): A rows at a + tap[t] + k * chunk_step, lda bytes apart; B at b + t * b_tap + k * 16
// groups.
inline void Block(const uint8_t* a, const int64_t* tap, int64_t chunk_step, int64_t lda, const int8_t* b,
                  int64_t taps, int64_t chunks, int64_t b_tap, int half, int32_t* acc) {
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  b += 32 * 4 * half;
  for (int64_t t = 0; t < taps; ++t)
    for (int64_t k = 0; k < chunks; ++k) {
      const uint8_t* ap = a + tap[t] + k * chunk_step;
      const int8_t* bp = b + t * b_tap + k * 16 * kGroupRow;
      _tile_loadd(4, ap, lda);
      _tile_loadd(6, bp, kGroupRow);       // channels 0-15 of the half
      _tile_loadd(7, bp + 64, kGroupRow);  // channels 16-31
      _tile_dpbusd(0, 4, 6);
      _tile_dpbusd(1, 4, 7);
      _tile_loadd(5, ap + 16 * lda, lda);
      _tile_dpbusd(2, 5, 6);
      _tile_dpbusd(3, 5, 7);
    }
  constexpr int64_t ld = kPanel * 4;  // acc's row in bytes
  int32_t* c = acc + 32 * half;
  _tile_stored(0, c, ld);
  _tile_stored(1, c + 16, ld);
  _tile_stored(2, c + 16 * kPanel, ld);
  _tile_stored(3, c + 16 * kPanel + 16, ld);
}

// Tiles 0-7 as LoadFullTiles, except that the A tiles (4, 5) are k codes wide and the B tiles
// (6, 7) k / 4 groups tall: a conv with C < 64 multiplies only its C codes (k = 64 otherwise).
inline void LoadTiles(int64_t k) {
  amx::TileConfig cfg;
  for (int t = 0; t < 8; ++t) cfg.colsb[t] = 64, cfg.rows[t] = 16;
  cfg.colsb[4] = cfg.colsb[5] = static_cast<uint16_t>(k);
  cfg.rows[6] = cfg.rows[7] = static_cast<uint8_t>(k / 4);
  __asm__ volatile("ldtilecfg %0" : : "m"(cfg));  // as LoadFullTiles: not GCC 12's _tile_loadconfig
}

// 64 codes from src (n of them; zeros after), kFlip: int8 codes + 128.
template <bool kFlip>
inline __m512i Codes(const uint8_t* src, int64_t n) {
  const __mmask64 mask = n >= 64 ? ~__mmask64{0} : (__mmask64{1} << n) - 1;
  const __m512i v = _mm512_maskz_loadu_epi8(mask, src);
  return kFlip ? _mm512_maskz_mov_epi8(mask, _mm512_xor_si512(v, _mm512_set1_epi8(static_cast<char>(0x80)))) : v;
}

// The block's window rows ptr[t * kBlock + r] to dst [taps][chunks][kBlock][64].
template <bool kFlip>
void Stage(const uint8_t* const* ptr, int64_t taps, int64_t c, int64_t chunks, uint8_t* dst) {
  for (int64_t t = 0; t < taps; ++t)
    for (int r = 0; r < kBlock; ++r) {
      const uint8_t* src = ptr[t * kBlock + r];
      uint8_t* row = dst + (t * chunks * kBlock + r) * kStep;
      for (int64_t k = 0; k < chunks; ++k, row += kBlock * kStep)
        _mm512_storeu_si512(row, Codes<kFlip>(src + k * kStep, c - k * kStep));
    }
}

// Row yy of the canvas of a unit-stride conv: the image with its padding made real, so that a
// window's tap reads canvas row q + (i dy wp + j dx) for virtual pixel q = y wp + x. Pixel xx (of
// wp) holds input pixel (yy - top, xx - left)'s C codes, or where that is outside the zero
// point's, then zeros to cp.
template <bool kFlip>
void CanvasRow(const Q8ConvNhwcShape& s, const uint8_t* img, int64_t c, int64_t cp, int64_t wp, const uint8_t* zero_row,
               int64_t yy, uint8_t* dst) {
  const int64_t y = yy - s.top;
  for (int64_t xx = 0; xx < wp; ++xx) {
    const int64_t x = xx - s.left;
    const bool inside = y >= 0 && y < s.ih && x >= 0 && x < s.iw;
    const uint8_t* src = inside ? img + (y * s.iw + x) * c : zero_row;
    for (int64_t k = 0; k * kStep < cp; ++k)
      _mm512_storeu_si512(dst + xx * cp + k * kStep, Codes<kFlip>(src + k * kStep, c - k * kStep));
  }
}

}  // namespace

void Q8ConvNhwcAmx(const PackedQ8Nhwc& w, const Q8ConvNhwcShape& s, const void* image, bool x_signed, int32_t x_zero,
                   const Q8Output& out, ThreadPool* pool, const uint8_t* lut, const Q8ConvAddend* add) {
  const int64_t pixels = s.oh * s.ow, m = w.m(), c = w.channels(), taps = w.taps(), groups = c / 4;
  if (pixels <= 0) return;
  const auto* img = static_cast<const uint8_t*>(image);
  const Q8NhwcTapRows tap_rows(s, img, c, x_zero);
  const int64_t chunks = CeilDiv(c, int64_t{kStep}), cp = chunks * kStep, panels = CeilDiv(m, kPanel);
  const int32_t zx = x_zero + (x_signed ? 128 : 0);  // as the VNNI kernel: int8 codes read + 128
  const bool lut_in_tile = Q8ConvNhwcLutInTile(lut);
  const RowsFn finish = lut_in_tile       ? PickRowsLut(out.out_signed)
                        : add != nullptr ? PickRowsOf<Post::kAdd>(out.out_signed)
                                         : PickRowsOf<Post::kNone>(out.out_signed);
  // Where the A tiles come from. A pointwise conv of uint8 codes in whole chunks: image rows in
  // place (a last partial block staged). Other unit-stride convs: the canvas, built once (about
  // the image's size), whose virtual pixels q = y wp + x read every tap at one stride; the
  // columns x >= ow are computed and dropped (wp / ow more work: 1.04 at 56x56, 1.29 at 7x7, where
  // the 32-pixel blocks round the same way). Strided convs: each block's window rows staged.
  // A C below 64 (one chunk) reads only its C codes of a pixel (LoadTiles), so such a pointwise conv
  // reads its image in place too: MobileNetV2's 32-channel 1x1 convs copied 0.8 MB at 112x112.
  const int64_t tile_k = chunks == 1 ? c : kStep;
  const bool in_place = taps == 1 && s.sy == 1 && s.sx == 1 && s.top == 0 && s.left == 0 && s.oh == s.ih &&
                        s.ow == s.iw && (c == cp || chunks == 1) && !x_signed;
  const bool on_canvas = !in_place && s.sy == 1 && s.sx == 1;
  const int64_t wp = s.ow + (s.kw - 1) * s.dx, hp = s.oh + (s.kh - 1) * s.dy;
  const int64_t virtual_pixels = on_canvas ? (s.oh - 1) * wp + s.ow : pixels;
  const int64_t blocks = CeilDiv(virtual_pixels, int64_t{kBlock});
  std::vector<int64_t> tap(static_cast<size_t>(taps));
  for (int64_t i = 0; i < s.kh; ++i)
    for (int64_t j = 0; j < s.kw; ++j)
      tap[static_cast<size_t>(i * s.kw + j)] =
          on_canvas ? (i * s.dy * wp + j * s.dx) * cp : (i * s.kw + j) * chunks * kBlock * kStep;
  thread_local std::vector<uint8_t> canvas;  // this caller's; the workers read it through the pointer
  if (on_canvas) {
    // Rows past hp * wp: the last block's virtual pixels past the last (computed, never stored).
    const auto size = static_cast<size_t>((hp * wp + kBlock) * cp);
    if (canvas.size() < size) canvas.resize(size);
    std::fill(canvas.begin() + hp * wp * cp, canvas.begin() + static_cast<int64_t>(size), uint8_t{0});
    const std::vector<uint8_t> zero_row(static_cast<size_t>(cp), static_cast<uint8_t>(x_zero));
    uint8_t* rows = canvas.data();
    ThreadPool::For(pool, hp, static_cast<double>(wp * cp), [&](int64_t y0, int64_t y1) {
      for (int64_t yy = y0; yy < y1; ++yy) {
        if (x_signed)
          CanvasRow<true>(s, img, c, cp, wp, zero_row.data(), yy, rows + yy * wp * cp);
        else
          CanvasRow<false>(s, img, c, cp, wp, zero_row.data(), yy, rows + yy * wp * cp);
      }
    });
  }
  const uint8_t* canvas_rows = canvas.data();
  const bool staged = !in_place && !on_canvas;
  const int64_t block_bytes = kBlock * taps * cp;  // a block's staged A (or about what it reads)
  // Tasks: a run of blocks (staged together, within the budget) by a run of panels; each panel's
  // weights stay in cache while the run's blocks use them. With threads, enough tasks to share.
  const int threads = pool != nullptr ? pool->num_threads() : 1;
  const int64_t weight_bytes = panels * taps * groups * kGroupRow;
  const int64_t budget = weight_bytes <= kWeightsInL2 ? kStageL1 : kStageL2;
  int64_t per_task = std::clamp<int64_t>(budget / block_bytes, 1, blocks);
  if (threads > 1) per_task = std::min(per_task, CeilDiv(blocks, int64_t{2} * threads));
  const int64_t block_tasks = CeilDiv(blocks, per_task);
  int64_t panel_runs = 1;
  if (threads > 1 && block_tasks < 4 * threads) panel_runs = std::min(panels, CeilDiv(int64_t{4} * threads, block_tasks));
  const int64_t per_run = CeilDiv(panels, panel_runs);
  panel_runs = CeilDiv(panels, per_run);
  // The epilogue of a block's rows from virtual pixel q0 on: runs of stored pixels (on the canvas,
  // each output row's first ow virtual pixels).
  auto store = [&](const int32_t* acc, const Epilogue& e, int64_t m0, int64_t valid, int64_t q0) {
    const int64_t q1 = std::min(q0 + kBlock, virtual_pixels);
    for (int64_t q = q0; q < q1;) {
      const int64_t x = on_canvas ? q % wp : q;
      if (on_canvas && x >= s.ow) {
        q += wp - x;
        continue;
      }
      const int64_t p = on_canvas ? q / wp * s.ow + x : q;
      const int n = static_cast<int>(on_canvas ? std::min(q1 - q, s.ow - x) : q1 - q);
      auto* y = static_cast<uint8_t*>(out.c) + p * out.ldc + m0;
      const uint8_t* other = add != nullptr ? static_cast<const uint8_t*>(add->other) + p * add->ldo + m0 : nullptr;
      finish(acc + (q - q0) * kPanel, e, y, out.ldc, other, add != nullptr ? add->ldo : 0, n);
      if (lut != nullptr && !lut_in_tile)
        for (int r = 0; r < n; ++r)
          for (int64_t ch = 0; ch < valid; ++ch) y[r * out.ldc + ch] = lut[y[r * out.ldc + ch]];
      q += n;
    }
  };
  const double cost = 2.0 * kBlock * per_task * per_run * static_cast<double>(taps * c * kPanel);
  ThreadPool::For(pool, block_tasks * panel_runs, cost, [&](int64_t t0, int64_t t1) {
    thread_local std::vector<uint8_t> stage;
    thread_local std::vector<const uint8_t*> ptr;
    if (stage.size() < static_cast<size_t>(per_task * block_bytes)) stage.resize(static_cast<size_t>(per_task * block_bytes));
    if (ptr.size() < static_cast<size_t>(taps * kBlock)) ptr.resize(static_cast<size_t>(taps * kBlock));
    alignas(64) int32_t acc[kBlock * kPanel] = {};
    LoadTiles(tile_k);
    for (int64_t task = t0; task < t1; ++task) {
      const int64_t b0 = task / panel_runs * per_task, b1 = std::min(blocks, b0 + per_task);
      const int64_t panel0 = task % panel_runs * per_run, panel1 = std::min(panels, panel0 + per_run);
      auto is_staged = [&](int64_t b) { return staged || (in_place && (b + 1) * kBlock > pixels); };
      for (int64_t b = b0; b < b1; ++b) {
        if (!is_staged(b)) continue;
        const int64_t p0 = b * kBlock;
        tap_rows.Gather(p0, static_cast<int>(std::min<int64_t>(kBlock, pixels - p0)), kBlock, ptr.data());
        uint8_t* dst = stage.data() + (b - b0) * block_bytes;
        if (x_signed)
          Stage<true>(ptr.data(), taps, c, chunks, dst);
        else
          Stage<false>(ptr.data(), taps, c, chunks, dst);
      }
      for (int64_t panel = panel0; panel < panel1; ++panel) {
        const int64_t m0 = panel * kPanel, valid = std::min<int64_t>(kPanel, m - m0);
        const Epilogue e = MakeEpilogue(w, out, m0, zx, lut_in_tile ? lut : nullptr, add);
        const int8_t* wpanel = w.data() + panel * taps * groups * kGroupRow;
        for (int64_t b = b0; b < b1; ++b) {
          const int64_t q0 = b * kBlock;
          const bool from_stage = is_staged(b);
          const uint8_t* a = from_stage ? stage.data() + (b - b0) * block_bytes
                             : on_canvas ? canvas_rows + q0 * cp
                                         : img + q0 * c;
          const int64_t chunk_step = from_stage ? kBlock * kStep : kStep, lda = from_stage ? kStep : on_canvas ? cp : c;
          for (int half = 0; half < (valid > 32 ? 2 : 1); ++half)
            Block(a, tap.data(), chunk_step, lda, wpanel, taps, chunks, groups * kGroupRow, half, acc);
          store(acc, e, m0, valid, q0);
        }
      }
    }
    amx::ReleaseTiles();
  });
}

}  // namespace onyx::linalg
#endif  // __x86_64__
