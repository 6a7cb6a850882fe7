// Q8DepthwiseNhwc's AVX-512 VNNI kernel (q8_dwconv_nhwc.h): 64 channels a step, four kernel
// rows a vpdpbusd, each input column's quads made once per output row.
#if defined(__x86_64__)

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12 reports its own AVX-512 headers' undefined-vector idiom as maybe uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <immintrin.h>

#include <algorithm>
#include <vector>

#include "linalg/q8_dwconv_nhwc_kernel.h"

namespace onyx::linalg {

namespace {

// Output pixels [ox0, ox1) of one row, 64 channels (mask) from the quads of their columns:
// KW > 0 a kernel KW wide of at most 4 rows (weights kept in registers), KW = 0 any (kw, groups).
template <int KW>
void Pixels(const __m512i* quads, const int8_t* w, const int32_t* init, const float* sc, __m512 lo, __m512 hi,
            __m512i zp, bool out_signed, int64_t sx, int64_t dx, int64_t ox0, int64_t ox1, int64_t ch, __mmask64 mask,
            uint8_t* y, int64_t kw = KW, int64_t groups = 1) {
  constexpr int kRegs = KW > 0 ? 4 * KW : 1;
  __m512i wr[kRegs];
  if constexpr (KW > 0)
    for (int t = 0; t < kRegs; ++t) wr[t] = _mm512_loadu_si512(w + 64 * t);
  const __m512i i0 = _mm512_loadu_si512(init), i1 = _mm512_loadu_si512(init + 16);
  const __m512i i2 = _mm512_loadu_si512(init + 32), i3 = _mm512_loadu_si512(init + 48);
  const __m512 s0 = _mm512_loadu_ps(sc), s1 = _mm512_loadu_ps(sc + 16);
  const __m512 s2 = _mm512_loadu_ps(sc + 32), s3 = _mm512_loadu_ps(sc + 48);
  for (int64_t ox = ox0; ox < ox1; ++ox) {
    __m512i acc0 = i0, acc1 = i1, acc2 = i2, acc3 = i3;
    const __m512i* first = quads + (ox - ox0) * sx * groups * 4;
    if constexpr (KW > 0) {
      for (int j = 0; j < KW; ++j) {
        const __m512i* qv = first + j * dx * 4;
        acc0 = _mm512_dpbusd_epi32(acc0, qv[0], wr[4 * j]);
        acc1 = _mm512_dpbusd_epi32(acc1, qv[1], wr[4 * j + 1]);
        acc2 = _mm512_dpbusd_epi32(acc2, qv[2], wr[4 * j + 2]);
        acc3 = _mm512_dpbusd_epi32(acc3, qv[3], wr[4 * j + 3]);
      }
    } else {
      for (int64_t j = 0; j < kw; ++j) {
        const __m512i* qv = first + j * dx * groups * 4;
        const int8_t* wj = w + j * groups * 256;
        for (int64_t g = 0; g < groups; ++g, qv += 4, wj += 256) {
          acc0 = _mm512_dpbusd_epi32(acc0, qv[0], _mm512_loadu_si512(wj));
          acc1 = _mm512_dpbusd_epi32(acc1, qv[1], _mm512_loadu_si512(wj + 64));
          acc2 = _mm512_dpbusd_epi32(acc2, qv[2], _mm512_loadu_si512(wj + 128));
          acc3 = _mm512_dpbusd_epi32(acc3, qv[3], _mm512_loadu_si512(wj + 192));
        }
      }
    }
    // Q8DepthwiseRequant's arithmetic: scaled, clamped in float, rounded half to even (the
    // default rounding mode); the packs undo the unpacks' order (exact: within [-255, 255],
    // then with the zero point within the output type).
    auto scaled = [&](__m512i v, __m512 scale) {
      const __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(v), scale);
      return _mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(f, lo), hi));
    };
    const __m512i w01 = _mm512_add_epi16(_mm512_packs_epi32(scaled(acc0, s0), scaled(acc1, s1)), zp);
    const __m512i w23 = _mm512_add_epi16(_mm512_packs_epi32(scaled(acc2, s2), scaled(acc3, s3)), zp);
    const __m512i codes = out_signed ? _mm512_packs_epi16(w01, w23) : _mm512_packus_epi16(w01, w23);
    _mm512_mask_storeu_epi8(y + ox * ch, mask, codes);
  }
}

}  // namespace

void Q8DepthwiseNhwcAvx512Vnni(const Q8DepthwiseNhwcCall& call, const Q8DepthwiseShape& s, const uint8_t* x,
                               uint8_t* out, int64_t p0, int64_t p1) {
  const int64_t ch = call.channels, kh = s.kh, kw = s.kw, groups = (kh + 3) / 4;
  const int64_t per_image = s.oh * s.ow;
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(call.x_signed ? 0x80 : 0));
  const __m512 lo = _mm512_set1_ps(call.lo), hi = _mm512_set1_ps(call.hi);
  const __m512i zp = _mm512_set1_epi16(static_cast<int16_t>(call.zero_point));
  // Per input column of the row's windows: its kernel rows' codes as vpdpbusd quads,
  // [column][group of 4 kernel rows][4 vectors] (one 64-channel block at a time).
  thread_local std::vector<__m512i, std::allocator<__m512i>> quads;
  const uint8_t* rows[kQ8DepthwiseNhwcMaxRows];  // each kernel row's image row, null in the padding
  for (int64_t p = p0; p < p1;) {
    // The pixels [ox0, ox1) of output row oy of image n.
    const int64_t n = p / per_image, oy = p % per_image / s.ow, ox0 = p % s.ow;
    const int64_t ox1 = std::min(s.ow, ox0 + (p1 - p));
    const uint8_t* image = x + n * s.ih * s.iw * ch;
    for (int64_t i = 0; i < kh; ++i) {
      const int64_t y = oy * s.sy + i * s.dy - s.top;
      rows[i] = y >= 0 && y < s.ih ? image + y * s.iw * ch : nullptr;
    }
    const int64_t xlo = ox0 * s.sx - s.left, columns = (ox1 - 1 - ox0) * s.sx + (kw - 1) * s.dx + 1;
    if (quads.size() < static_cast<size_t>(columns * groups * 4)) quads.resize(static_cast<size_t>(columns * groups * 4));
    __m512i* qbase = quads.data();  // thread_local: read once, not per access
    uint8_t* dst = out + (n * per_image + oy * s.ow) * ch;
    for (int64_t c0 = 0; c0 < ch; c0 += 64) {
      const int64_t left = ch - c0;
      const __mmask64 mask = left >= 64 ? ~__mmask64{0} : (__mmask64{1} << left) - 1;
      for (int64_t cx = 0; cx < columns; ++cx) {
        const int64_t xx = xlo + cx;
        const bool inside = xx >= 0 && xx < s.iw;
        for (int64_t g = 0; g < groups; ++g) {
          __m512i r[4];
          for (int q = 0; q < 4; ++q) {
            const int64_t i = g * 4 + q;
            if (i >= kh) {  // rows past the kernel meet zero weights
              r[q] = _mm512_setzero_si512();
              continue;
            }
            const uint8_t* src = inside && rows[i] != nullptr ? rows[i] + xx * ch : call.pad_row;
            r[q] = _mm512_xor_si512(_mm512_maskz_loadu_epi8(mask, src + c0), flip);
          }
          // Per 128-bit lane (16 channels): bytes of rows 0/1 and 2/3 paired, then the pairs
          // joined: vector k holds channels 4k..4k+3 of each lane, each dword its four rows.
          const __m512i a0 = _mm512_unpacklo_epi8(r[0], r[1]), a1 = _mm512_unpackhi_epi8(r[0], r[1]);
          const __m512i b0 = _mm512_unpacklo_epi8(r[2], r[3]), b1 = _mm512_unpackhi_epi8(r[2], r[3]);
          __m512i* qv = qbase + (cx * groups + g) * 4;
          qv[0] = _mm512_unpacklo_epi16(a0, b0), qv[1] = _mm512_unpackhi_epi16(a0, b0);
          qv[2] = _mm512_unpacklo_epi16(a1, b1), qv[3] = _mm512_unpackhi_epi16(a1, b1);
        }
      }
      const int32_t* init = call.init + c0;
      const float* sc = call.scale + c0;
      const int8_t* wb = call.w + (c0 / 64) * kw * groups * 256;
      uint8_t* y = dst + c0;
      if (groups == 1 && kw == 3) Pixels<3>(qbase, wb, init, sc, lo, hi, zp, call.out_signed, s.sx, s.dx, ox0, ox1, ch, mask, y);
      else Pixels<0>(qbase, wb, init, sc, lo, hi, zp, call.out_signed, s.sx, s.dx, ox0, ox1, ch, mask, y, kw, groups);
    }
    p += ox1 - ox0;
  }
}

}  // namespace onyx::linalg
#endif  // __x86_64__
