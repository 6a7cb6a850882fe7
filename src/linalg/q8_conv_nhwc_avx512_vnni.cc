// The direct channels-last int8 convolution (q8_conv_nhwc.h) on AVX-512 VNNI: tiles of 6 output
// pixels by 64 output channels (24 accumulators). For each tap of the window, each pixel's row of
// C codes is read in place: vpdpbusd multiplies 4 of its codes (one broadcast) by 4 codes of each
// of 64 channels' weights (4 vectors, one weight panel) into int32 lanes, exactly. A tile's rows
// are finished in registers (x's zero point through the weights' sums, bias, scale, clamp,
// round half to even, zero point) and stored as runs of 64 channels of the channels-last output.
#if defined(__x86_64__)

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12 reports its own AVX-512 headers' undefined-vector idiom as maybe uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "base/int_math.h"
#include "linalg/q8_conv_nhwc.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {
namespace {

constexpr int kRows = 6;
constexpr int64_t kPanel = PackedQ8Nhwc::kPanel;
// Tiles a task runs on one weight panel: the panel stays in L1 / L2 across them.
constexpr int64_t kTilesPerTask = 16;

// acc[kRows][NV] (16 int32 each) = sum over taps and C / 4 groups; ptr[t * kRows + r]: the row of
// C codes pixel r reads at tap t. kFlip: int8 codes, stored + 128.
template <int NV, bool kFlip>
void Tile(const uint8_t* const* ptr, int64_t taps, int64_t groups, const int8_t* w, int32_t* acc) {
  __m512i c[kRows][NV];
#pragma GCC unroll 6
  for (int r = 0; r < kRows; ++r)
    for (int v = 0; v < NV; ++v) c[r][v] = _mm512_setzero_si512();
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  for (int64_t t = 0; t < taps; ++t) {
    const uint8_t* p[kRows];
    for (int r = 0; r < kRows; ++r) p[r] = ptr[t * kRows + r];
    for (int64_t q = 0; q < groups; ++q, w += kPanel * 4) {
      __m512i b[NV];
      for (int v = 0; v < NV; ++v) b[v] = _mm512_loadu_si512(w + 64 * v);
#pragma GCC unroll 6
      for (int r = 0; r < kRows; ++r) {
        int32_t quad;
        std::memcpy(&quad, p[r] + 4 * q, sizeof(quad));
        __m512i a = _mm512_set1_epi32(quad);
        if (kFlip) a = _mm512_xor_si512(a, flip);
        for (int v = 0; v < NV; ++v) c[r][v] = _mm512_dpbusd_epi32(c[r][v], a, b[v]);
      }
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < kRows; ++r)
    for (int v = 0; v < NV; ++v) _mm512_store_si512(acc + (r * 4 + v) * 16, c[r][v]);
}

using TileFn = void (*)(const uint8_t* const*, int64_t, int64_t, const int8_t*, int32_t*);

template <bool kFlip>
TileFn PickTile(int nv) {
  switch (nv) {
    case 1: return &Tile<1, kFlip>;
    case 2: return &Tile<2, kFlip>;
    case 3: return &Tile<3, kFlip>;
    default: return &Tile<4, kFlip>;
  }
}

}  // namespace

void Q8ConvNhwc(const PackedQ8Nhwc& w, const Q8ConvNhwcShape& s, const void* image, bool x_signed, int32_t x_zero,
                const Q8Output& out, ThreadPool* pool) {
  if (out.kind != Q8Output::kQuantized || out.transposed) throw std::invalid_argument("Q8ConvNhwc: unsupported output");
  if (w.empty() || w.channels() != s.channels || w.taps() != s.kh * s.kw)
    throw std::invalid_argument("Q8ConvNhwc: the packed weights do not match the shape");
  const int64_t pixels = s.oh * s.ow, m = w.m(), c = w.channels(), taps = w.taps(), groups = c / 4;
  if (pixels <= 0) return;
  const auto* img = static_cast<const uint8_t*>(image);
  const std::vector<uint8_t> zero_row(static_cast<size_t>(c), static_cast<uint8_t>(x_zero));
  const int64_t panels = CeilDiv(m, kPanel), tiles = CeilDiv(pixels, int64_t{kRows});
  const int64_t blocks = CeilDiv(tiles, kTilesPerTask);
  // Stored x codes: int8 + 128, its zero point too; acc - zx' * sum_k w' is the exact result.
  const int32_t zx = x_zero + (x_signed ? 128 : 0);
  const float lo = (out.out_signed ? -128.0f : 0.0f) - static_cast<float>(out.zero_point);
  const float hi = (out.out_signed ? 127.0f : 255.0f) - static_cast<float>(out.zero_point);
  // Small weights (all panels stay in L2): a thread runs every panel of a pixel block in turn,
  // so each output row is finished while in L1 (panel by panel, the output of a 56x56 map with
  // 256 channels, 800 KB, was evicted between the sweeps: 1.2x the time). Large weights: a panel
  // stays while the thread runs its pixel blocks.
  const bool by_block = panels * taps * groups * kPanel * 4 <= (int64_t{256} << 10);
  const double cost = 2.0 * kRows * kTilesPerTask * static_cast<double>(taps * c * kPanel);
  ThreadPool::For(pool, panels * blocks, cost, [&](int64_t t0, int64_t t1) {
    std::vector<const uint8_t*> ptr(static_cast<size_t>(taps * kRows));
    alignas(64) int32_t acc[kRows * 4 * 16];
    for (int64_t task = t0; task < t1; ++task) {
      const int64_t panel = by_block ? task % panels : task / blocks;
      const int64_t block = by_block ? task / panels : task % blocks;
      const int64_t m0 = panel * kPanel;
      const int nv = static_cast<int>(std::min<int64_t>(4, CeilDiv(m - m0, int64_t{16})));
      const TileFn tile = x_signed ? PickTile<true>(nv) : PickTile<false>(nv);
      const int8_t* wp = w.data() + panel * taps * groups * kPanel * 4;
      // The panel's per-channel terms: bias - zx' * sum_k w' (int32), scale, store mask.
      __m512i offset[4];
      __m512 scale[4];
      __mmask16 masks[4];
      for (int v = 0; v < nv; ++v) {
        const int64_t ch = m0 + 16 * v;
        const int valid = static_cast<int>(std::min<int64_t>(16, m - ch));
        masks[v] = static_cast<__mmask16>(valid >= 16 ? 0xFFFF : (1u << valid) - 1);
        const __m512i corr = _mm512_mullo_epi32(_mm512_set1_epi32(zx), _mm512_maskz_loadu_epi32(masks[v], w.sums() + ch));
        const __m512i bias =
            out.bias_int != nullptr ? _mm512_maskz_loadu_epi32(masks[v], out.bias_int + ch) : _mm512_setzero_si512();
        offset[v] = _mm512_sub_epi32(bias, corr);
        scale[v] = out.scale_per_column ? _mm512_maskz_loadu_ps(masks[v], out.scale + ch) : _mm512_set1_ps(out.scale[0]);
      }
      const __m512i zp = _mm512_set1_epi32(out.zero_point);
      const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
      const int64_t tile1 = std::min(tiles, (block + 1) * kTilesPerTask);
      for (int64_t ti = block * kTilesPerTask; ti < tile1; ++ti) {
        const int64_t p0 = ti * kRows;
        const int rows = static_cast<int>(std::min<int64_t>(kRows, pixels - p0));
        // The tile's first pixel once by division, the rest by stepping (rows past the end
        // repeat the last pixel).
        int64_t oy = p0 / s.ow, ox = p0 % s.ow;
        for (int r = 0; r < kRows; ++r) {
          if (r > 0 && r < rows && ++ox == s.ow) ox = 0, ++oy;
          const int64_t y0 = oy * s.sy - s.top, x0 = ox * s.sx - s.left;
          for (int64_t i = 0; i < s.kh; ++i) {
            const int64_t y = y0 + i * s.dy;
            for (int64_t j = 0; j < s.kw; ++j) {
              const int64_t x = x0 + j * s.dx;
              const bool inside = y >= 0 && y < s.ih && x >= 0 && x < s.iw;
              ptr[static_cast<size_t>((i * s.kw + j) * kRows + r)] = inside ? img + (y * s.iw + x) * c : zero_row.data();
            }
          }
        }
        tile(ptr.data(), taps, groups, wp, acc);
        for (int r = 0; r < rows; ++r) {
          uint8_t* row = static_cast<uint8_t*>(out.c) + (p0 + r) * out.ldc + m0;
          for (int v = 0; v < nv; ++v) {
            const __m512i a = _mm512_load_si512(acc + (r * 4 + v) * 16);
            __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(a, offset[v])), scale[v]);
            f = _mm512_min_ps(_mm512_max_ps(f, vlo), vhi);  // clamped in float first, as ORT does
            const __m128i q = _mm512_cvtepi32_epi8(_mm512_add_epi32(_mm512_cvtps_epi32(f), zp));
            _mm_mask_storeu_epi8(row + 16 * v, masks[v], q);
          }
        }
      }
    }
  });
}

}  // namespace onyx::linalg
#endif  // __x86_64__
