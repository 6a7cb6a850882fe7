// The direct channels-last int8 convolution (q8_conv_nhwc.h) on AVX2: tiles of 4 output pixels by
// 16 output channels (8 accumulators of 8 int32), on PackedQ8Nhwc's weights as the VNNI tile
// reads them. Per tap and group of 4 input codes: the 4 codes of a pixel are broadcast and split
// into 16-bit lanes (codes 0 and 2, codes 1 and 3), each weight vector's 8 channels x 4 codes into
// the matching int16 pairs, and vpmaddwd multiplies and adds pairs into int32 exactly.
// (vpmaddubsw on the bytes saturates its int16 pair sums, 255 * 127 * 2 > 32767; splitting it
// into single products needs as many instructions as the 16-bit form.) The requantization is the
// VNNI tile's (scale, top clamp in float, round half to even, saturating packs with the zero
// point), so both give the same codes. Where the CPU has AVX-VNNI the tile multiplies the bytes
// with vpdpbusd instead.
#if defined(__x86_64__)

#include "linalg/q8_conv_nhwc_avx2.h"
#include "linalg/q8_conv_nhwc_window.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <vector>

#include "base/int_math.h"
#include "platform/cpu_features.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {
namespace {

constexpr int kRows = 4;
constexpr int64_t kPanel = PackedQ8Nhwc::kPanel;  // the packing's 64 channels
constexpr int kSub = 16;                          // channels one tile computes (of the 64)
constexpr int64_t kTilesPerTask = 24;

// Per 16-channel sub-panel: the int32 start (bias - zx' * weight sums) and the scales; the top
// of the type's range less the zero point; QLinearAdd's parameters for an added image.
struct Epilogue {
  __m256i offset[2];
  __m256 scale[2];
  __m256 hi;
  __m256i zp16;
  int valid = kSub;  // the sub-panel's channels below M
  __m256 ra, rb, fixed, type_lo, type_hi;
  __m256i q_lo, zp32;
  bool conv_is_a = true;
};

// 2 x 8 int32 codes to 16 bytes in channel order (the packs work per 128-bit lane).
template <bool kSignedOut>
inline __m128i PackCodes(__m256i q0, __m256i q1, __m256i zp16) {
  const __m256i words = _mm256_adds_epi16(_mm256_packs_epi32(q0, q1), zp16);
  const __m256i bytes = kSignedOut ? _mm256_packs_epi16(words, words) : _mm256_packus_epi16(words, words);
  // Dwords 0 / 4 hold codes 0-3 / 4-7 of q0, dwords 1 / 5 those of q1.
  return _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 0, 0, 0, 0)));
}

template <bool kSigned>
inline __m256 CodesToFloat(const uint8_t* p) {
  const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  return _mm256_cvtepi32_ps(kSigned ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b));
}

template <bool kSignedOut, bool kAdd>
inline void StoreRow(const Epilogue& e, const __m256i (&c)[2], uint8_t* row, const uint8_t* other) {
  __m256i q[2];
  for (int v = 0; v < 2; ++v) {
    // As the VNNI tile: only the top clamped in float, the packs clamp the bottom.
    q[v] = _mm256_cvtps_epi32(_mm256_min_ps(e.hi, _mm256_mul_ps(_mm256_cvtepi32_ps(c[v]), e.scale[v])));
  }
  __m128i codes;
  if constexpr (kAdd) {
    uint8_t other_codes[kSub] = {};
    std::memcpy(other_codes, other, static_cast<size_t>(e.valid));
    __m256i z[2];
    for (int v = 0; v < 2; ++v) {
      const __m256 y = _mm256_cvtepi32_ps(_mm256_add_epi32(_mm256_max_epi32(q[v], e.q_lo), e.zp32));
      const __m256 r = CodesToFloat<kSignedOut>(other_codes + 8 * v);
      const __m256 a = e.conv_is_a ? y : r, b = e.conv_is_a ? r : y;
      __m256 sum = _mm256_fmadd_ps(a, e.ra, _mm256_fmadd_ps(b, e.rb, e.fixed));
      sum = _mm256_min_ps(_mm256_max_ps(sum, e.type_lo), e.type_hi);
      z[v] = _mm256_cvtps_epi32(sum);  // round half to even (the default rounding)
    }
    codes = PackCodes<kSignedOut>(z[0], z[1], _mm256_setzero_si256());
  } else {
    codes = PackCodes<kSignedOut>(q[0], q[1], e.zp16);
  }
  if (e.valid == kSub) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(row), codes);
  } else {
    uint8_t buf[kSub];
    _mm_storeu_si128(reinterpret_cast<__m128i*>(buf), codes);
    std::memcpy(row, buf, static_cast<size_t>(e.valid));
  }
}

// acc[kRows][2] = offset + sum over taps and groups; ptr[t * kRows + r]: pixel r's row of codes
// at tap t; w: the sub-panel's first weights (a group's next at w + 256).
template <bool kFlip, bool kSignedOut, bool kAdd>
void Tile(const uint8_t* const* ptr, int64_t taps, int64_t groups, const int8_t* w, const Epilogue& e,
          uint8_t* const* out, const uint8_t* const* other, int rows) {
  __m256i c[kRows][2];
  for (int r = 0; r < kRows; ++r) c[r][0] = e.offset[0], c[r][1] = e.offset[1];
  const __m256i low_bytes = _mm256_set1_epi16(0x00FF);
  for (int64_t t = 0; t < taps; ++t) {
    const uint8_t* p[kRows];
    for (int r = 0; r < kRows; ++r) p[r] = ptr[t * kRows + r];
    for (int64_t q = 0; q < groups; ++q, w += kPanel * 4) {
      // Channel j's 4 codes are bytes 4j..4j+3: as int16, codes 0 and 2 (even) and 1 and 3 (odd).
      const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w));
      const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 32));
      const __m256i even0 = _mm256_srai_epi16(_mm256_slli_epi16(b0, 8), 8), odd0 = _mm256_srai_epi16(b0, 8);
      const __m256i even1 = _mm256_srai_epi16(_mm256_slli_epi16(b1, 8), 8), odd1 = _mm256_srai_epi16(b1, 8);
#pragma GCC unroll 4
      for (int r = 0; r < kRows; ++r) {
        uint32_t quad;
        std::memcpy(&quad, p[r] + 4 * q, sizeof(quad));
        if (kFlip) quad ^= 0x80808080u;  // int8 codes as stored + 128
        const __m256i a = _mm256_set1_epi32(static_cast<int32_t>(quad));
        const __m256i a_even = _mm256_and_si256(a, low_bytes), a_odd = _mm256_srli_epi16(a, 8);
        c[r][0] = _mm256_add_epi32(c[r][0], _mm256_add_epi32(_mm256_madd_epi16(a_even, even0), _mm256_madd_epi16(a_odd, odd0)));
        c[r][1] = _mm256_add_epi32(c[r][1], _mm256_add_epi32(_mm256_madd_epi16(a_even, even1), _mm256_madd_epi16(a_odd, odd1)));
      }
    }
  }
  for (int r = 0; r < rows; ++r) StoreRow<kSignedOut, kAdd>(e, c[r], out[r], kAdd ? other[r] : nullptr);
}

// The same tile where the CPU has AVX-VNNI (VEX vpdpbusd on 256 bits: Intel since Alder Lake,
// AMD since Zen 4): 4 u8 x s8 products summed into int32 exactly, no widening.
template <bool kFlip, bool kSignedOut, bool kAdd>
__attribute__((target("avxvnni"))) void TileVnni(const uint8_t* const* ptr, int64_t taps, int64_t groups,
                                                 const int8_t* w, const Epilogue& e, uint8_t* const* out,
                                                 const uint8_t* const* other, int rows) {
  __m256i c[kRows][2];
  for (int r = 0; r < kRows; ++r) c[r][0] = e.offset[0], c[r][1] = e.offset[1];
  for (int64_t t = 0; t < taps; ++t) {
    const uint8_t* p[kRows];
    for (int r = 0; r < kRows; ++r) p[r] = ptr[t * kRows + r];
    for (int64_t q = 0; q < groups; ++q, w += kPanel * 4) {
      const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w));
      const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 32));
#pragma GCC unroll 4
      for (int r = 0; r < kRows; ++r) {
        uint32_t quad;
        std::memcpy(&quad, p[r] + 4 * q, sizeof(quad));
        if (kFlip) quad ^= 0x80808080u;
        const __m256i a = _mm256_set1_epi32(static_cast<int32_t>(quad));
        c[r][0] = _mm256_dpbusd_avx_epi32(c[r][0], a, b0);
        c[r][1] = _mm256_dpbusd_avx_epi32(c[r][1], a, b1);
      }
    }
  }
  for (int r = 0; r < rows; ++r) StoreRow<kSignedOut, kAdd>(e, c[r], out[r], kAdd ? other[r] : nullptr);
}

using TileFn = void (*)(const uint8_t* const*, int64_t, int64_t, const int8_t*, const Epilogue&, uint8_t* const*,
                        const uint8_t* const*, int);

template <bool kAdd, bool kVnni>
TileFn PickTileOf(bool x_signed, bool out_signed) {
  if constexpr (kVnni) {
    if (x_signed) return out_signed ? &TileVnni<true, true, kAdd> : &TileVnni<true, false, kAdd>;
    return out_signed ? &TileVnni<false, true, kAdd> : &TileVnni<false, false, kAdd>;
  } else {
    if (x_signed) return out_signed ? &Tile<true, true, kAdd> : &Tile<true, false, kAdd>;
    return out_signed ? &Tile<false, true, kAdd> : &Tile<false, false, kAdd>;
  }
}

TileFn PickTile(bool x_signed, bool out_signed, bool add, bool vnni) {
  if (vnni) return add ? PickTileOf<true, true>(x_signed, out_signed) : PickTileOf<false, true>(x_signed, out_signed);
  return add ? PickTileOf<true, false>(x_signed, out_signed) : PickTileOf<false, false>(x_signed, out_signed);
}

std::atomic<bool> vnni_allowed{true};  // Q8ConvNhwcAvx2AllowVnni

}  // namespace

void Q8ConvNhwcAvx2AllowVnni(bool allowed) { vnni_allowed = allowed; }

bool Q8ConvNhwcAvx2UsesVnni() { return vnni_allowed && GetCpuFeatures().avx_vnni; }

void Q8ConvNhwcAvx2(const PackedQ8Nhwc& w, const Q8ConvNhwcShape& s, const void* image, bool x_signed,
                    int32_t x_zero, const Q8Output& out, ThreadPool* pool, const uint8_t* lut,
                    const Q8ConvAddend* add) {
  const int64_t pixels = s.oh * s.ow, m = w.m(), c = w.channels(), taps = w.taps(), groups = c / 4;
  if (pixels <= 0) return;
  const Q8NhwcTapRows tap_rows(s, static_cast<const uint8_t*>(image), c, x_zero);
  const int64_t panels = CeilDiv(m, kPanel), tiles = CeilDiv(pixels, int64_t{kRows});
  const int64_t blocks = CeilDiv(tiles, kTilesPerTask);
  const int32_t zx = x_zero + (x_signed ? 128 : 0);  // stored x codes: int8 + 128
  const float hi = (out.out_signed ? 127.0f : 255.0f) - static_cast<float>(out.zero_point);
  // As the VNNI driver: small weights, every panel of a pixel block in turn; large, a panel at a time.
  const bool by_block = panels * taps * groups * kPanel * 4 <= (int64_t{256} << 10);
  const TileFn tile = PickTile(x_signed, out.out_signed, add != nullptr, Q8ConvNhwcAvx2UsesVnni());
  const double cost = 2.0 * kRows * kTilesPerTask * static_cast<double>(taps * c * kPanel);
  ThreadPool::For(pool, panels * blocks, cost, [&](int64_t t0, int64_t t1) {
    std::vector<const uint8_t*> ptr(static_cast<size_t>(taps * kRows));
    for (int64_t task = t0; task < t1; ++task) {
      const int64_t panel = by_block ? task % panels : task / blocks;
      const int64_t block = by_block ? task / panels : task % blocks;
      const int64_t m0 = panel * kPanel;
      const int subs = static_cast<int>(std::min<int64_t>(4, CeilDiv(m - m0, int64_t{kSub})));
      const int8_t* wp = w.data() + panel * taps * groups * kPanel * 4;
      Epilogue e[4];
      for (int sub = 0; sub < subs; ++sub) {
        const int64_t ch0 = m0 + kSub * sub;
        e[sub].valid = static_cast<int>(std::min<int64_t>(kSub, m - ch0));
        for (int v = 0; v < 2; ++v) {
          alignas(32) int32_t offset[8];
          alignas(32) float scale[8];
          for (int j = 0; j < 8; ++j) {
            const int64_t ch = ch0 + 8 * v + j;
            const bool inside = ch < m;
            offset[j] = inside ? (out.bias_int != nullptr ? out.bias_int[ch] : 0) - zx * w.sums()[ch] : 0;
            scale[j] = inside ? out.scale[out.scale_per_column ? ch : 0] : 0.0f;
          }
          e[sub].offset[v] = _mm256_load_si256(reinterpret_cast<const __m256i*>(offset));
          e[sub].scale[v] = _mm256_load_ps(scale);
        }
        e[sub].hi = _mm256_set1_ps(hi);
        e[sub].zp16 = _mm256_set1_epi16(static_cast<int16_t>(out.zero_point));
        if (add != nullptr) {
          e[sub].ra = _mm256_set1_ps(add->ra), e[sub].rb = _mm256_set1_ps(add->rb);
          e[sub].fixed = _mm256_set1_ps(add->fixed);
          e[sub].type_lo = _mm256_set1_ps(out.out_signed ? -128.0f : 0.0f);
          e[sub].type_hi = _mm256_set1_ps(out.out_signed ? 127.0f : 255.0f);
          e[sub].q_lo = _mm256_set1_epi32((out.out_signed ? -128 : 0) - out.zero_point);
          e[sub].zp32 = _mm256_set1_epi32(out.zero_point);
          e[sub].conv_is_a = add->conv_is_a;
        }
      }
      const int64_t valid = std::min<int64_t>(kPanel, m - m0);
      const int64_t tile1 = std::min(tiles, (block + 1) * kTilesPerTask);
      for (int64_t ti = block * kTilesPerTask; ti < tile1; ++ti) {
        const int64_t p0 = ti * kRows;
        const int rows = static_cast<int>(std::min<int64_t>(kRows, pixels - p0));
        tap_rows.Gather(p0, rows, kRows, ptr.data());
        uint8_t* rows_out[kRows];
        const uint8_t* rows_other[kRows] = {};
        for (int sub = 0; sub < subs; ++sub) {
          const int64_t ch0 = m0 + kSub * sub;
          for (int r = 0; r < kRows; ++r)
            rows_out[r] = static_cast<uint8_t*>(out.c) + (p0 + std::min(r, rows - 1)) * out.ldc + ch0;
          for (int r = 0; r < kRows && add != nullptr; ++r)
            rows_other[r] = static_cast<const uint8_t*>(add->other) + (p0 + std::min(r, rows - 1)) * add->ldo + ch0;
          tile(ptr.data(), taps, groups, wp + kSub * 4 * sub, e[sub], rows_out, rows_other, rows);
        }
        if (lut != nullptr)
          for (int r = 0; r < rows; ++r) {
            uint8_t* row = static_cast<uint8_t*>(out.c) + (p0 + r) * out.ldc + m0;
            for (int64_t ch = 0; ch < valid; ++ch) row[ch] = lut[row[ch]];
          }
      }
    }
  });
}

}  // namespace onyx::linalg
#endif  // __x86_64__
