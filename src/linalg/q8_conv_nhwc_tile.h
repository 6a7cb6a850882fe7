// The tile of the direct channels-last int8 convolution (q8_conv_nhwc_avx512_vnni.cc) and its
// requantizing epilogue, shared with q8_conv_nhwc_avx512_vnni_lut.cc, which compiles them with
// AVX-512 VBMI for tiles that look their codes up in a table, and with the AMX kernel
// (q8_conv_nhwc_amx_32x32.cc), which finishes its int32 tiles through the same epilogue: each
// including file instantiates the templates (internal linkage) for its own target. Include only
// from *_avx512_vnni*.cc and *_amx_*.cc files.
#pragma once

#if defined(__x86_64__)

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "linalg/q8_conv_nhwc.h"

namespace onyx::linalg::q8_nhwc {

constexpr int kRows = 6;
constexpr int64_t kPanel = PackedQ8Nhwc::kPanel;
// Tiles a task runs on one weight panel: the panel stays in L1 / L2 across them.
constexpr int64_t kTilesPerTask = 16;

// The per-tile requantization: per output channel of the panel (4 vectors of 16), the int32
// offset bias - zx' * sum_k w' (the accumulators start from it) and the scale; the top of the
// type's range less the zero point, the zero point, which of a row's 64 codes are stored, a
// table of 256 codes for tiles that look their codes up (a following per-code op: SiLU), and a
// following QLinearAdd's parameters for tiles that add another image's codes.
struct Epilogue {
  __m512i offset[4];
  __m512 scale[4];
  __m512 hi;
  __m512i zp16;              // the zero point in 16-bit lanes
  __mmask64 store = ~0ull;  // the panel's valid channels
  __m512i lut[4];            // kLut tiles: a table of 256 codes each stored code is looked up in
  // kAdd tiles (Q8ConvAddend): QLinearAdd's ratios and fixed part, the type's range as floats,
  // the conv's codes' lowest value less the zero point, and which operand the conv's codes are.
  __m512 ra, rb, fixed, type_lo, type_hi;
  __m512i q_lo, zp32;
  bool conv_is_a = true;
};

// What a tile does to its requantized codes before storing them.
enum class Post { kNone, kLut, kAdd };

// (ptr, taps, groups, w, e, out rows, other rows (kAdd: the addend's rows, else unused), rows)
using TileFn = void (*)(const uint8_t* const*, int64_t, int64_t, const int8_t*, const Epilogue&, uint8_t* const*,
                        const uint8_t* const*, int);

// Tiles that look their codes up in Epilogue::lut (q8_conv_nhwc_avx512_vnni_lut.cc; AVX-512 VBMI).
TileFn PickTileLut(int nv, bool x_signed, bool out_signed);

// The epilogue of rows already summed elsewhere (the AMX tiles): (acc [rows][kPanel] int32, the
// sums without Epilogue::offset; e; out, ldc; other, ldo (kAdd's addend rows); rows).
using RowsFn = void (*)(const int32_t*, const Epilogue&, uint8_t*, int64_t, const uint8_t*, int64_t, int);

// RowsFn that look their codes up in Epilogue::lut (q8_conv_nhwc_avx512_vnni_lut.cc; AVX-512 VBMI).
RowsFn PickRowsLut(bool out_signed);

namespace {

// 4 x 16 int32 codes already in the type's range to 64 bytes in channel order: two saturating
// packs to 16 bits (which interleave 128-bit lanes: one permute restores the order) give 64 codes
// for one store (per 16 channels a vpmovdb and a masked store cost twice as much). zp16: added to
// the 16-bit values between the packs (saturating).
template <bool kSignedOut>
inline __m512i PackCodes(const __m512i (&q)[4], __m512i zp16) {
  const __m512i ab = _mm512_adds_epi16(_mm512_packs_epi32(q[0], q[1]), zp16);
  const __m512i cd = _mm512_adds_epi16(_mm512_packs_epi32(q[2], q[3]), zp16);
  const __m512i bytes = kSignedOut ? _mm512_packs_epi16(ab, cd) : _mm512_packus_epi16(ab, cd);
  // Dword 4i + j of the packs holds codes 4i..4i+3 of vector j: back to vector-major order.
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  return _mm512_permutexvar_epi32(order, bytes);
}

// 16 codes of a row as floats (masked: channels past the panel's valid ones read nothing).
template <bool kSigned>
inline __m512 CodesToFloat(const uint8_t* p, __mmask16 m) {
  const __m128i b = _mm_maskz_loadu_epi8(m, p);
  return _mm512_cvtepi32_ps(kSigned ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b));
}

// The 64 requantized codes of one pixel, [then looked up | then added to `other`'s codes], stored.
template <bool kSignedOut, Post kPost>
inline void StoreRow(const Epilogue& e, const __m512i (&c)[4], uint8_t* row, const uint8_t* other) {
  __m512i q[4];
  for (int v = 0; v < 4; ++v) {
    // Only the top is clamped in float (the conversion of a value past int32 gives INT_MIN, as
    // for NaN, which min keeps): the saturating packs and add clamp the bottom, and as both
    // bounds are whole numbers that equals rounding after clamping, as ORT does.
    const __m512 f = _mm512_min_ps(e.hi, _mm512_mul_ps(_mm512_cvtepi32_ps(c[v]), e.scale[v]));
    q[v] = _mm512_cvtps_epi32(f);
  }
  if constexpr (kPost == Post::kAdd) {
    // The conv's code y (its bottom clamped in int32, as the packs clamp it, then its zero point),
    // then QLinearAdd's two fmas in its operand order, its clamp and one rounding half to even
    // (Q8AddAvx512Impl's steps); the sums are in the type's range, so the packs keep them.
    __m512i z[4];
    for (int v = 0; v < 4; ++v) {
      const __m512 y = _mm512_cvtepi32_ps(_mm512_add_epi32(_mm512_max_epi32(q[v], e.q_lo), e.zp32));
      const __m512 r = CodesToFloat<kSignedOut>(other + 16 * v, static_cast<__mmask16>(e.store >> (16 * v)));
      const __m512 a = e.conv_is_a ? y : r, b = e.conv_is_a ? r : y;
      __m512 sum = _mm512_fmadd_ps(a, e.ra, _mm512_fmadd_ps(b, e.rb, e.fixed));
      sum = _mm512_min_ps(_mm512_max_ps(sum, e.type_lo), e.type_hi);
      z[v] = _mm512_cvt_roundps_epi32(sum, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    }
    _mm512_mask_storeu_epi8(row, e.store, PackCodes<kSignedOut>(z, _mm512_setzero_si512()));
    return;
  }
  __m512i codes = PackCodes<kSignedOut>(q, e.zp16);
  if constexpr (kPost == Post::kLut) {  // AVX-512 VBMI: entries 0-127 and 128-255 by two vpermi2b, picked by bit 7
    const __m512i low = _mm512_permutex2var_epi8(e.lut[0], codes, e.lut[1]);
    const __m512i high = _mm512_permutex2var_epi8(e.lut[2], codes, e.lut[3]);
    codes = _mm512_mask_blend_epi8(_mm512_movepi8_mask(codes), low, high);
  }
  _mm512_mask_storeu_epi8(row, e.store, codes);
}

// One tile: acc[kRows][NV] (16 int32 each) = offset + sum over taps and C / 4 groups, finished in
// registers into out[r] (rows r < rows); ptr[t * kRows + r]: the row of C codes pixel r reads at
// tap t. kFlip: int8 codes, stored + 128. other[r]: kAdd's addend row of out[r].
template <int NV, bool kFlip, bool kSignedOut, Post kPost>
void Tile(const uint8_t* const* ptr, int64_t taps, int64_t groups, const int8_t* w, const Epilogue& e,
          uint8_t* const* out, const uint8_t* const* other, int rows) {
  __m512i c[kRows][NV];
#pragma GCC unroll 6
  for (int r = 0; r < kRows; ++r)
    for (int v = 0; v < NV; ++v) c[r][v] = e.offset[v];
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
  for (int r = 0; r < kRows; ++r) {
    if (r >= rows) break;
    __m512i row[4];
    for (int v = 0; v < 4; ++v) row[v] = v < NV ? c[r][v] : _mm512_setzero_si512();
    StoreRow<kSignedOut, kPost>(e, row, out[r], kPost == Post::kAdd ? other[r] : nullptr);
  }
}

// RowsFn: each row's 64 int32 sums plus the offset, then the tile's own StoreRow: one definition
// of the requantization for both kernels, so their codes are the same bit for bit.
template <bool kSignedOut, Post kPost>
void FinishRows(const int32_t* acc, const Epilogue& e, uint8_t* out, int64_t ldc, const uint8_t* other, int64_t ldo,
                int rows) {
  for (int r = 0; r < rows; ++r) {
    __m512i c[4];
    for (int v = 0; v < 4; ++v) c[v] = _mm512_add_epi32(e.offset[v], _mm512_loadu_si512(acc + r * kPanel + 16 * v));
    StoreRow<kSignedOut, kPost>(e, c, out + r * ldc, kPost == Post::kAdd ? other + r * ldo : nullptr);
  }
}

template <Post kPost>
RowsFn PickRowsOf(bool out_signed) {
  return out_signed ? &FinishRows<true, kPost> : &FinishRows<false, kPost>;
}

// The epilogue of the panel of output channels from m0 on: zx is x's zero point as the kernel
// reads its codes (int8 + 128); lut: the table when looked up in registers, else null.
inline Epilogue MakeEpilogue(const PackedQ8Nhwc& w, const Q8Output& out, int64_t m0, int32_t zx, const uint8_t* lut,
                             const Q8ConvAddend* add) {
  const int64_t m = w.m();
  Epilogue e;
  for (int v = 0; v < 4; ++v) {
    const int64_t ch = m0 + 16 * v;
    const int valid = static_cast<int>(std::clamp<int64_t>(m - ch, 0, 16));
    const auto mask = static_cast<__mmask16>(valid >= 16 ? 0xFFFF : (1u << valid) - 1);
    const __m512i corr = _mm512_mullo_epi32(_mm512_set1_epi32(zx), _mm512_maskz_loadu_epi32(mask, w.sums() + ch));
    const __m512i bias =
        out.bias_int != nullptr ? _mm512_maskz_loadu_epi32(mask, out.bias_int + ch) : _mm512_setzero_si512();
    e.offset[v] = _mm512_sub_epi32(bias, corr);
    e.scale[v] = out.scale_per_column ? _mm512_maskz_loadu_ps(mask, out.scale + ch) : _mm512_set1_ps(out.scale[0]);
  }
  const int64_t valid = std::min<int64_t>(kPanel, m - m0);
  e.store = valid >= 64 ? ~__mmask64{0} : (__mmask64{1} << valid) - 1;
  e.hi = _mm512_set1_ps((out.out_signed ? 127.0f : 255.0f) - static_cast<float>(out.zero_point));
  e.zp16 = _mm512_set1_epi16(static_cast<int16_t>(out.zero_point));
  for (int v = 0; v < 4 && lut != nullptr; ++v) e.lut[v] = _mm512_loadu_si512(lut + 64 * v);
  if (add != nullptr) {
    e.ra = _mm512_set1_ps(add->ra), e.rb = _mm512_set1_ps(add->rb), e.fixed = _mm512_set1_ps(add->fixed);
    e.type_lo = _mm512_set1_ps(out.out_signed ? -128.0f : 0.0f);
    e.type_hi = _mm512_set1_ps(out.out_signed ? 127.0f : 255.0f);
    e.q_lo = _mm512_set1_epi32((out.out_signed ? -128 : 0) - out.zero_point);
    e.zp32 = _mm512_set1_epi32(out.zero_point);
    e.conv_is_a = add->conv_is_a;
  }
  return e;
}

template <bool kFlip, bool kSignedOut, Post kPost>
TileFn PickTileOf(int nv) {
  switch (nv) {
    case 1: return &Tile<1, kFlip, kSignedOut, kPost>;
    case 2: return &Tile<2, kFlip, kSignedOut, kPost>;
    case 3: return &Tile<3, kFlip, kSignedOut, kPost>;
    default: return &Tile<4, kFlip, kSignedOut, kPost>;
  }
}

template <Post kPost>
TileFn PickTileOf(int nv, bool x_signed, bool out_signed) {
  if (x_signed) return out_signed ? PickTileOf<true, true, kPost>(nv) : PickTileOf<true, false, kPost>(nv);
  return out_signed ? PickTileOf<false, true, kPost>(nv) : PickTileOf<false, false, kPost>(nv);
}

}  // namespace
}  // namespace onyx::linalg::q8_nhwc

#endif  // __x86_64__
