// Q8Depthwise for AVX-512 VNNI: the kernel's rows as vpdpbusd quads read straight from a padded
// byte copy of the channel, no 32-bit plane. A kernel row of up to 4 taps is one vpdpbusd over
// 16 outputs: lane k holds the bytes its taps read (a 64-byte load shuffled by vpermd, then
// vpshufb) against the row's weights as int8 (a fourth byte of weight 0). The codes go in as
// uint8 (int8 codes + 128) with the padding holding the zero point's code, so every output reads
// all its taps and X - x_zp is the constant correction x_zp * sum(w). Rows narrower than 16
// outputs share a vector (7x7: two rows, 14 of 16 lanes). Sums are exact, requantized in
// registers as in q8_dwconv_impl.h; shapes or weights outside int8 take Q8DepthwiseImpl.
#if defined(__x86_64__)

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12 reports its own AVX-512 headers' undefined-vector idiom as maybe uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "linalg/q8_dwconv_impl.h"

namespace onyx::linalg {
namespace {

constexpr int64_t kMaxRows = 16;  // kernel rows, each one vpdpbusd
constexpr int64_t kLoad = 64;     // bytes of one load: every lane's taps lie in it

// Where the 16 lanes read: output lane k is (row y0 + k / ow, column x0 + k % ow) when `rows` > 1
// output rows share a vector, else column x0 + k of one row; its tap j reads byte
// offset(k, j) of a load at the vector's first input byte. vpermd brings each 128-bit lane the
// (up to 4) dwords holding its four outputs' bytes, vpshufb picks them.
struct QuadLanes {
  int64_t rows = 0;  // 0: this shape does not fit
  __m512i dwords = _mm512_setzero_si512(), bytes = _mm512_setzero_si512();
};

QuadLanes MakeLanes(const Q8DepthwiseShape& s, int64_t pw, int64_t rows) {
  QuadLanes q;
  alignas(64) int32_t dw[16] = {};
  alignas(64) uint8_t by[64] = {};
  for (int64_t lane = 0; lane < 4; ++lane) {
    int64_t slots = 0;
    for (int64_t t = 0; t < 4; ++t) {
      const int64_t k = 4 * lane + t;
      if (rows > 1 && k >= rows * s.ow) continue;  // a lane past the rows: masked off
      const int64_t r = rows == 1 ? 0 : k / s.ow, x = rows == 1 ? k : k % s.ow;
      for (int64_t j = 0; j < s.kw; ++j) {  // taps past kw keep byte 0 (weight 0)
        const int64_t offset = r * s.sy * pw + x * s.sx + j * s.dx;
        if (offset >= kLoad) return q;
        int64_t slot = 0;
        while (slot < slots && dw[4 * lane + slot] != offset / 4) ++slot;
        if (slot == slots) {
          if (slots == 4) return q;
          dw[4 * lane + slots++] = static_cast<int32_t>(offset / 4);
        }
        by[16 * lane + 4 * t + j] = static_cast<uint8_t>(4 * slot + offset % 4);
      }
    }
  }
  q.rows = rows;
  q.dwords = _mm512_load_si512(dw);
  q.bytes = _mm512_load_si512(by);
  return q;
}

// The widest packing that fits: as many whole rows as 16 lanes hold, down to one row a vector.
QuadLanes ChooseLanes(const Q8DepthwiseShape& s, int64_t pw) {
  for (int64_t rows = std::clamp<int64_t>(16 / s.ow, 1, s.oh); rows >= 1; --rows) {
    const QuadLanes q = MakeLanes(s, pw, rows);
    if (q.rows != 0) return q;
  }
  return QuadLanes();
}

// Whether every channel's weights (w - w_zp) are int8, so they can be vpdpbusd's signed bytes.
bool WeightsAreInt8(const int32_t* w, int64_t n) {
  uint32_t outside = 0;  // no early exit: the loop vectorizes
  for (int64_t i = 0; i < n; ++i) outside |= static_cast<uint32_t>(w[i] + 128 > 255 || w[i] + 128 < 0);
  return outside == 0;
}

// Byte 4i + j of a channel's kernel as quads: w[i, j] (as the index of an int8 of its taps),
// or zero past kw; for kernels of at most 4 rows and 16 taps (the per-channel packing is then
// one shuffle, not a scalar loop: it was a tenth of a 7x7 channel's time).
__m128i QuadIndex(int64_t kh, int64_t kw) {
  alignas(16) uint8_t index[16];
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 4; ++j)
      index[4 * i + j] = i < kh && j < kw ? static_cast<uint8_t>(i * kw + j) : 0x80;
  return _mm_load_si128(reinterpret_cast<const __m128i*>(index));
}

// Copies the image rows of one channel into the padded bytes (int8 codes + 128 when flip is 0x80):
// whole rows by mask, no memcpy call per 7- to 112-byte row.
void CopyRows(const uint8_t* __restrict src, int64_t rows, int64_t width, int64_t src_stride,
              uint8_t* __restrict dst, int64_t dst_stride, __m512i flip) {
  const __mmask64 last = width % 64 == 0 ? ~0ull : (1ull << (width % 64)) - 1;
  for (int64_t y = 0; y < rows; ++y, src += src_stride, dst += dst_stride) {
    int64_t i = 0;
    for (; i + 64 < width; i += 64)
      _mm512_storeu_si512(dst + i, _mm512_xor_si512(_mm512_loadu_si512(src + i), flip));
    if (width > 0)
      _mm512_mask_storeu_epi8(dst + i, last, _mm512_xor_si512(_mm512_maskz_loadu_epi8(last, src + i), flip));
  }
}

// The sums of kh kernel rows (kKh when not 0, so that 3x3's loop unrolls and its weights stay in
// registers) for the vectors of one channel, offset by `addend` (bias minus the zero point's
// correction), then requantized (rq) or stored as int32. Lane geometry as in QuadLanes.
template <int kKh>
void ChannelSums(const Q8DepthwiseShape& s, int64_t pw, const QuadLanes& lanes, const uint8_t* padded,
                 const __m512i* wq, int32_t addend, const Q8DepthwiseRequant* rq, int64_t c, void* out) {
  const int64_t kh = kKh != 0 ? kKh : s.kh, oh = s.oh, ow = s.ow, rows = lanes.rows;
  const int64_t row_step = s.sy * pw, tap_step = s.dy * pw, col_step = s.sx;
  const int64_t xstep = rows > 1 ? ow : 16;
  const __m512i dwords = lanes.dwords, bytes = lanes.bytes, add = _mm512_set1_epi32(addend);
  __m512i qzp = _mm512_setzero_si512();
  __m512 scale = _mm512_setzero_ps(), lo = scale, hi = scale;
  if (rq != nullptr) {
    scale = _mm512_set1_ps(rq->scale[c]);
    lo = _mm512_set1_ps((rq->out_signed ? -128.0f : 0.0f) - static_cast<float>(rq->zero_point));
    hi = _mm512_set1_ps((rq->out_signed ? 127.0f : 255.0f) - static_cast<float>(rq->zero_point));
    qzp = _mm512_set1_epi32(rq->zero_point);
  }
  auto* out8 = static_cast<uint8_t*>(out) + c * oh * ow;
  auto* out32 = static_cast<int32_t*>(out) + c * oh * ow;
  auto finish = [&](__m512i v, int64_t at, __mmask16 m) {
    if (rq == nullptr) {
      _mm512_mask_storeu_epi32(out32 + at, m, v);
      return;
    }
    __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(v), scale);
    f = _mm512_min_ps(_mm512_max_ps(f, lo), hi);
    _mm_mask_storeu_epi8(out8 + at, m, _mm512_cvtepi32_epi8(_mm512_add_epi32(_mm512_cvtps_epi32(f), qzp)));
  };
  // kG (2 or 4) rows' vectors requantized at once: narrowed by packs (exact: within [-255, 255],
  // then with the zero point within the output type) and one vpermd that puts each row's 16 codes
  // in a 128-bit lane, instead of a vpmovdb (2 uops) a vector.
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  const __m512i qzp16 = _mm512_set1_epi16(static_cast<int16_t>(rq != nullptr ? rq->zero_point : 0));
  // Vector g's codes go to out8 + at + g * step, under mask m (`last` for the last vector).
  auto finish_rows = [&](auto g_tag, const __m512i* v, int64_t at, int64_t step, __mmask16 m, __mmask16 last) {
    constexpr int kG = decltype(g_tag)::value;
    __m512i r[kG];
    for (int g = 0; g < kG; ++g)
      r[g] = _mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(v[g]), scale), lo), hi));
    const __m512i p01 = _mm512_add_epi16(_mm512_packs_epi32(r[0], r[1]), qzp16);
    __m512i p23 = p01;  // 2 rows: lanes 2 and 3 repeat them, unstored
    if constexpr (kG == 4) p23 = _mm512_add_epi16(_mm512_packs_epi32(r[2], r[3]), qzp16);
    const __m512i codes =
        _mm512_permutexvar_epi32(order, rq->out_signed ? _mm512_packs_epi16(p01, p23) : _mm512_packus_epi16(p01, p23));
    _mm_mask_storeu_epi8(out8 + at, m, _mm512_castsi512_si128(codes));
    _mm_mask_storeu_epi8(out8 + at + step, kG == 2 ? last : m, _mm512_extracti32x4_epi32(codes, 1));
    if constexpr (kG == 4) {
      _mm_mask_storeu_epi8(out8 + at + 2 * step, m, _mm512_extracti32x4_epi32(codes, 2));
      _mm_mask_storeu_epi8(out8 + at + 3 * step, last, _mm512_extracti32x4_epi32(codes, 3));
    }
  };
  auto quads = [&](const uint8_t* p) {
    return _mm512_shuffle_epi8(_mm512_permutexvar_epi32(dwords, _mm512_loadu_si512(p)), bytes);
  };
  auto mask = [](int64_t n) { return static_cast<__mmask16>(n >= 16 ? 0xFFFFu : (1u << n) - 1u); };
  // 3-row kernels over rows of one output row a vector: kG output rows a pass, so that an input
  // row shared by several of them (stride 1: 6 input rows for 4 output rows, not 12) is loaded
  // and shuffled once. Returns the first row left.
  auto row_groups = [&](auto g_tag, auto sy_tag) {
    constexpr int kG = decltype(g_tag)::value, kSy = decltype(sy_tag)::value, kIn = (kG - 1) * kSy + 3;
    const __m512i w0 = wq[0], w1 = wq[1], w2 = wq[2];
    int64_t y = 0;
    for (; y + kG <= oh; y += kG)
      for (int64_t xo = 0; xo < ow; xo += 16) {
        const uint8_t* base = padded + y * row_step + xo * col_step;
        __m512i q[kIn];
        for (int r = 0; r < kIn; ++r) q[r] = quads(base + r * pw);
        const __mmask16 m = mask(ow - xo);
        __m512i v[kG];
        for (int g = 0; g < kG; ++g) {
          v[g] = _mm512_dpbusd_epi32(add, q[g * kSy], w0);
          v[g] = _mm512_dpbusd_epi32(v[g], q[g * kSy + 1], w1);
          v[g] = _mm512_dpbusd_epi32(v[g], q[g * kSy + 2], w2);
        }
        if (rq != nullptr) finish_rows(g_tag, v, y * ow + xo, ow, m, m);
        else for (int g = 0; g < kG; ++g) finish(v[g], (y + g) * ow + xo, m);
      }
    return y;
  };
  // 3-row kernels over vectors of `rows` > 1 whole output rows (small planes: 7x7 is 4 vectors of
  // 2 rows): 4 vectors a pass with no per-vector bookkeeping, codes narrowed together, and with 2
  // input rows between vectors (stride 1) the row two of them share loaded and shuffled once (9
  // loads for 4 vectors, not 12). The 4th vector may hold fewer rows; every load is one the
  // vector-at-a-time loop below makes too. Returns the first row left.
  auto multi_row_groups = [&] {
    const __m512i w0 = wq[0], w1 = wq[1], w2 = wq[2];
    const int64_t vector_rows = rows * s.sy;  // input rows from one vector to the next
    const __mmask16 full = mask(rows * ow);
    int64_t y = 0;
    for (; y + 3 * rows < oh; y += 4 * rows) {
      const uint8_t* base = padded + y * row_step;
      __m512i v[4];
      if (vector_rows == 2 && s.dy == 1) {
        __m512i q[9];
        for (int r = 0; r < 9; ++r) q[r] = quads(base + r * pw);
        for (int g = 0; g < 4; ++g) {
          v[g] = _mm512_dpbusd_epi32(add, q[2 * g], w0);
          v[g] = _mm512_dpbusd_epi32(v[g], q[2 * g + 1], w1);
          v[g] = _mm512_dpbusd_epi32(v[g], q[2 * g + 2], w2);
        }
      } else {
        for (int g = 0; g < 4; ++g) {
          const uint8_t* b = base + g * vector_rows * pw;
          v[g] = _mm512_dpbusd_epi32(add, quads(b), w0);
          v[g] = _mm512_dpbusd_epi32(v[g], quads(b + tap_step), w1);
          v[g] = _mm512_dpbusd_epi32(v[g], quads(b + 2 * tap_step), w2);
        }
      }
      const __mmask16 last = mask(std::min(rows, oh - y - 3 * rows) * ow);
      if (rq != nullptr) {
        finish_rows(std::integral_constant<int, 4>(), v, y * ow, rows * ow, full, last);
      } else {
        for (int g = 0; g < 3; ++g) finish(v[g], (y + g * rows) * ow, full);
        finish(v[3], (y + 3 * rows) * ow, last);
      }
    }
    return y;
  };
  int64_t y = 0;
  if constexpr (kKh == 3) {
    if (rows == 1 && s.dy == 1 && s.sy == 1)
      y = row_groups(std::integral_constant<int, 4>(), std::integral_constant<int, 1>());
    else if (rows == 1 && s.dy == 1 && s.sy == 2)
      y = row_groups(std::integral_constant<int, 2>(), std::integral_constant<int, 2>());
    else if (rows > 1)
      y = multi_row_groups();
  }
  for (; y < oh; y += rows) {
    for (int64_t xo = 0; xo < ow; xo += xstep) {
      const int64_t n = rows > 1 ? std::min(rows, oh - y) * ow : std::min<int64_t>(16, ow - xo);
      const uint8_t* base = padded + y * row_step + xo * col_step;
      __m512i v = add;
      for (int64_t i = 0; i < kh; ++i) v = _mm512_dpbusd_epi32(v, quads(base + i * tap_step), wq[i]);
      finish(v, y * ow + xo, mask(n));
    }
  }
}

}  // namespace

void Q8DepthwiseAvx512Vnni(const Q8DepthwiseShape& s, int64_t count, const uint8_t* x, bool x_signed, int32_t x_zp,
                           const int32_t* w, const Q8DepthwiseRequant* rq, void* out, int32_t* scratch) {
  const Q8DepthwisePlane l = Q8DepthwiseLayout(s);
  const int32_t zp = x_signed ? x_zp + 128 : x_zp;  // the zero point's code as uint8
  const int64_t padded_size = l.ph * l.pw + kLoad;
  const int64_t taps = s.kh * s.kw;
  const QuadLanes lanes = s.kw <= 4 && s.kh <= kMaxRows ? ChooseLanes(s, l.pw) : QuadLanes();
  if (lanes.rows == 0 || zp < 0 || zp > 255 || padded_size > 4 * l.scratch || !WeightsAreInt8(w, count * taps)) {
    Q8DepthwiseImpl(s, count, x, x_signed, x_zp, w, rq, out, scratch);
    return;
  }
  // The padding keeps the zero point's code for every channel: only the image part is rewritten.
  auto* padded = reinterpret_cast<uint8_t*>(scratch);
  std::memset(padded, zp, static_cast<size_t>(padded_size));
  const int64_t x0 = std::min(l.pw, s.left), x1 = std::max(x0, std::min(l.pw, s.left + s.iw));
  const int64_t y0 = std::min(l.ph, s.top), y1 = std::max(y0, std::min(l.ph, s.top + s.ih));
  const int64_t in_size = s.ih * s.iw;
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(x_signed ? 0x80 : 0));
  const bool small_kernel = s.kh <= 4 && taps <= 16;
  const __m128i quad_index = QuadIndex(s.kh, s.kw);
  const auto tap_mask = static_cast<__mmask16>(small_kernel ? (1u << taps) - 1u : 0u);
  for (int64_t c = 0; c < count; ++c) {
    CopyRows(x + c * in_size + (y0 - s.top) * s.iw + (x0 - s.left), y1 - y0, x1 - x0, s.iw,
             padded + y0 * l.pw + x0, l.pw, flip);
    __m512i wq[kMaxRows];
    uint32_t wsum = 0;
    const int32_t* wc = w + c * taps;
    if (small_kernel) {
      const __m512i wv = _mm512_maskz_loadu_epi32(tap_mask, wc);
      wsum = static_cast<uint32_t>(_mm512_reduce_add_epi32(wv));
      const __m512i rows = _mm512_castsi128_si512(_mm_shuffle_epi8(_mm512_cvtepi32_epi8(wv), quad_index));
      for (int64_t i = 0; i < s.kh; ++i) wq[i] = _mm512_permutexvar_epi32(_mm512_set1_epi32(static_cast<int>(i)), rows);
    } else {
      for (int64_t i = 0; i < s.kh; ++i) {
        uint32_t packed = 0;
        for (int64_t j = 0; j < s.kw; ++j) {
          packed |= static_cast<uint32_t>(static_cast<uint8_t>(wc[i * s.kw + j])) << (8 * j);
          wsum += static_cast<uint32_t>(wc[i * s.kw + j]);
        }
        wq[i] = _mm512_set1_epi32(static_cast<int32_t>(packed));
      }
    }
    // acc + bias = sum(code * w) - zp * sum(w) + bias, in uint32 (the wrap of int32 sums).
    const uint32_t bias = rq != nullptr && rq->bias != nullptr ? static_cast<uint32_t>(rq->bias[c]) : 0u;
    const auto addend = static_cast<int32_t>(bias - static_cast<uint32_t>(zp) * wsum);
    if (s.kh == 3) ChannelSums<3>(s, l.pw, lanes, padded, wq, addend, rq, c, out);
    else ChannelSums<0>(s, l.pw, lanes, padded, wq, addend, rq, c, out);
  }
}

}  // namespace onyx::linalg
#endif  // __x86_64__
