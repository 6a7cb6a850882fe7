// Q8Depthwise's body, instantiated by each ISA file with its compiler flags: plain loops the
// compiler vectorizes, and intrinsics where __AVX2__ / __AVX512BW__ say the file has them.
// Internal linkage on purpose (see f32_gemm_tile_impl.h).
#pragma once

#if defined(__AVX2__) || defined(__AVX512BW__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "linalg/q8_dwconv.h"

namespace onyx::linalg {
namespace {

// The phase-split plane of one channel (q8_dwconv.h): plane row r (of ph) is row r / sy of row
// phase r % sy; within a row, column c (of pw) is column c / sx of column phase c % sx. A row
// holds sx phases of pwp columns (row_stride = sx * pwp), a row phase phh rows. Output (y, x)
// accumulates at y * row_stride + x, so acc spans (oh - 1) * row_stride + ow values. Scratch:
// the plane, acc, one plane row (pw int32), acc's requantized bytes, the pair plane (below) and
// the converted image, with room for the vector loops' last partial vectors.
struct Q8DepthwisePlane {
  int64_t ph, pw, phh, pwp, row_stride, phase_size, plane, acc;
  int64_t acc_at, line_at, bytes_at, pairs_at, image_at, scratch;  // scratch offsets (int32) and size
};

constexpr int64_t kPad = 16;  // a vector of int32

inline Q8DepthwisePlane Q8DepthwiseLayout(const Q8DepthwiseShape& s) {
  Q8DepthwisePlane l;
  l.ph = (s.oh - 1) * s.sy + (s.kh - 1) * s.dy + 1;
  l.pw = (s.ow - 1) * s.sx + (s.kw - 1) * s.dx + 1;
  l.phh = (l.ph + s.sy - 1) / s.sy;
  l.pwp = (l.pw + s.sx - 1) / s.sx;
  l.row_stride = s.sx * l.pwp;
  l.phase_size = l.phh * l.row_stride;
  l.plane = s.sy * l.phase_size;
  l.acc = (s.oh - 1) * l.row_stride + s.ow;
  l.acc_at = l.plane;
  l.line_at = l.acc_at + l.acc + kPad;
  l.bytes_at = l.line_at + l.pw + s.dx + kPad;
  l.pairs_at = l.bytes_at + (l.acc + kPad + 3) / 4;
  l.image_at = l.pairs_at + l.plane + kPad;
  l.scratch = l.image_at + s.ih * s.iw;
  return l;
}

template <int kUnused = 0>
void Q8RequantizeImpl(const int32_t* __restrict acc, int64_t count, int32_t bias, float scale, int32_t zero_point,
                      bool out_signed, uint8_t* __restrict out) {
  const float lo = (out_signed ? -128.0f : 0.0f) - static_cast<float>(zero_point);
  const float hi = (out_signed ? 127.0f : 255.0f) - static_cast<float>(zero_point);
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23: rounds half to even below 2^22
  for (int64_t i = 0; i < count; ++i) {
    const auto total = static_cast<int32_t>(static_cast<uint32_t>(acc[i]) + static_cast<uint32_t>(bias));
    const float f = std::min(std::max(static_cast<float>(total) * scale, lo), hi);
    out[i] = static_cast<uint8_t>(static_cast<int32_t>((f + kMagic) - kMagic) + zero_point);
  }
}

// One channel's plane of X - x_zp (zero in the padding and in the unused phase cells) from its
// image converted in one run (ConvertImage: rows of 7 to 56 pixels would leave most of a per-row
// loop in its scalar tail), copied row by row; `line` is one plane row.
inline void FillPlane(const Q8DepthwiseShape& s, const Q8DepthwisePlane& l, int32_t* __restrict plane,
                      int32_t* __restrict line, const int32_t* __restrict image) {
  // Columns [x0, x1) of a plane row come from the image, the rest is padding.
  const int64_t x0 = std::min(l.pw, s.left), x1 = std::max(x0, std::min(l.pw, s.left + s.iw));
  const auto run = static_cast<size_t>(x1 - x0) * sizeof(int32_t);
  if (s.sx == 1 && s.sy == 1) {
    for (int64_t y = 0; y < l.ph; ++y) {
      const int64_t sy_in = y - s.top;
      int32_t* dst = plane + y * l.pw;
      if (sy_in < 0 || sy_in >= s.ih) {
        std::fill(dst, dst + l.pw, 0);
        continue;
      }
      std::fill(dst, dst + x0, 0);
      std::fill(dst + x1, dst + l.pw, 0);
      if (run != 0) std::memcpy(dst + x0, image + sy_in * s.iw + (x0 - s.left), run);
    }
    return;
  }
  // Each image row goes through `line` (pw int32, padded), then into its column phases.
  std::fill(plane, plane + l.plane, 0);
  std::fill(line, line + x0, 0);
  std::fill(line + x1, line + l.pw, 0);
  for (int64_t y = std::max<int64_t>(0, s.top); y < std::min(l.ph, s.top + s.ih); ++y) {
    if (run != 0) std::memcpy(line + x0, image + (y - s.top) * s.iw + (x0 - s.left), run);
    int32_t* row = plane + (y % s.sy) * l.phase_size + (y / s.sy) * l.row_stride;
    if (s.sx == 1) {
      std::memcpy(row, line, static_cast<size_t>(l.pw) * sizeof(int32_t));
    } else if (s.sx == 2) {  // a constant stride: the compiler deinterleaves with permutes
      const int64_t pairs = l.pw / 2;
      int32_t* __restrict even = row;
      int32_t* __restrict odd = row + l.pwp;
      for (int64_t q = 0; q < pairs; ++q) {
        even[q] = line[2 * q];
        odd[q] = line[2 * q + 1];
      }
      if (l.pw % 2 != 0) even[pairs] = line[l.pw - 1];
    } else {
      for (int64_t c = 0; c < l.pw; ++c) row[(c % s.sx) * l.pwp + c / s.sx] = line[c];
    }
  }
}

// Where tap (i, j) of output 0 reads the plane; output t reads it at + t.
inline int64_t TapOffset(const Q8DepthwiseShape& s, const Q8DepthwisePlane& l, int64_t i, int64_t j) {
  const int64_t r = i * s.dy, c = j * s.dx;
  return (r % s.sy) * l.phase_size + (r / s.sy) * l.row_stride + (c % s.sx) * l.pwp + c / s.sx;
}

// acc[0:n] = sum over the taps of w * plane run (uint32: the int32 wrap ONNX allows without
// signed-overflow UB); three taps a pass for the common 3-wide kernels.
inline void AccumulateTaps(const Q8DepthwiseShape& s, const Q8DepthwisePlane& l, const int32_t* __restrict plane,
                           const int32_t* __restrict w, uint32_t* __restrict acc) {
  const int64_t n = l.acc;
  std::fill(acc, acc + n, 0u);
  for (int64_t i = 0; i < s.kh; ++i) {
    int64_t j = 0;
    for (; j + 3 <= s.kw; j += 3) {
      const auto* p0 = reinterpret_cast<const uint32_t*>(plane + TapOffset(s, l, i, j));
      const auto* p1 = reinterpret_cast<const uint32_t*>(plane + TapOffset(s, l, i, j + 1));
      const auto* p2 = reinterpret_cast<const uint32_t*>(plane + TapOffset(s, l, i, j + 2));
      const auto w0 = static_cast<uint32_t>(w[i * s.kw + j]), w1 = static_cast<uint32_t>(w[i * s.kw + j + 1]),
                 w2 = static_cast<uint32_t>(w[i * s.kw + j + 2]);
      for (int64_t t = 0; t < n; ++t) acc[t] += w0 * p0[t] + w1 * p1[t] + w2 * p2[t];
    }
    for (; j < s.kw; ++j) {
      const auto* p0 = reinterpret_cast<const uint32_t*>(plane + TapOffset(s, l, i, j));
      const auto w0 = static_cast<uint32_t>(w[i * s.kw + j]);
      for (int64_t t = 0; t < n; ++t) acc[t] += w0 * p0[t];
    }
  }
}

// Pairs of taps on 16-bit products: plane values (X - x_zp) and weights (w - w_zp) lie in
// [-255, 255], so taps (i, j) and (i, j + 1) are one vpmaddwd over the pair plane, laid out as
// the plane (same phases), whose value at plane column c is
//   plane[c] (low 16 bits) | plane[c + dx] (high 16 bits),
// and a last odd tap is a pair with weight 0. Sums of two products fit int32.
struct PairTap {
  int64_t offset;  // into pairs
  int32_t w2;      // w[i, j] (low 16 bits) | w[i, j + 1] (high 16 bits)
};
constexpr int kMaxPairTaps = 64;

// The kernel's pair taps, or 0 when there are too many.
inline int MakePairTaps(const Q8DepthwiseShape& s, const Q8DepthwisePlane& l, const int32_t* w, PairTap* taps) {
  if (s.kh * ((s.kw + 1) / 2) > kMaxPairTaps) return 0;
  int count = 0;
  for (int64_t i = 0; i < s.kh; ++i)
    for (int64_t j = 0; j < s.kw; j += 2) {
      const uint32_t lo = static_cast<uint16_t>(w[i * s.kw + j]);
      const uint32_t hi = j + 1 < s.kw ? static_cast<uint16_t>(w[i * s.kw + j + 1]) : 0u;
      taps[count++] = {TapOffset(s, l, i, j), static_cast<int32_t>(lo | hi << 16)};
    }
  return count;
}

inline uint32_t Pair(int32_t lo, int32_t hi) { return static_cast<uint16_t>(lo) | static_cast<uint32_t>(hi) << 16; }

// n codes of X minus x_zp into dst; AVX-512 converts whole rows with masks (no scalar tails).
inline void ConvertRow(const uint8_t* __restrict src, bool x_signed, int32_t x_zp, int64_t n,
                       int32_t* __restrict dst) {
#if defined(__AVX512BW__)
  const __m512i zp = _mm512_set1_epi32(x_zp);
  for (int64_t c = 0; c < n; c += 16) {
    const auto m = static_cast<__mmask16>(n - c >= 16 ? 0xFFFFu : (1u << (n - c)) - 1u);
    const __m128i b = _mm_maskz_loadu_epi8(m, src + c);
    const __m512i v = x_signed ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b);
    _mm512_mask_storeu_epi32(dst + c, m, _mm512_sub_epi32(v, zp));
  }
#else
  if (x_signed)
    for (int64_t c = 0; c < n; ++c) dst[c] = static_cast<int8_t>(src[c]) - x_zp;
  else
    for (int64_t c = 0; c < n; ++c) dst[c] = src[c] - x_zp;
#endif
}

#if defined(__AVX512BW__) || defined(__AVX2__)
constexpr bool kConvertRows = true;  // rows straight from X
#else
constexpr bool kConvertRows = false;  // the image first, in one run (ConvertImage)
#endif

#if defined(__AVX512BW__)
// One stride-1 pair-plane row from a padded byte row (padding holds the zero point's code, so it
// converts to 0): 16 columns of (X[c] - x_zp) | (X[c + dx] - x_zp) << 16 a step, straight from
// the bytes (going through an int32 row read back one column off stalled every load on store
// forwarding).
inline void PairRowFromBytes(const uint8_t* padded, int64_t pw, int64_t dx, bool x_signed, int32_t x_zp,
                             uint32_t* row) {
  const __m512i zp = _mm512_set1_epi32(x_zp), low = _mm512_set1_epi32(0xFFFF);
  for (int64_t c = 0; c < pw; c += 16) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(padded + c));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(padded + c + dx));
    const __m512i va = _mm512_sub_epi32(x_signed ? _mm512_cvtepi8_epi32(a) : _mm512_cvtepu8_epi32(a), zp);
    const __m512i vb = _mm512_sub_epi32(x_signed ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b), zp);
    const auto m = static_cast<__mmask16>(pw - c >= 16 ? 0xFFFFu : (1u << (pw - c)) - 1u);
    _mm512_mask_storeu_epi32(row + c, m, _mm512_or_si512(_mm512_and_si512(va, low), _mm512_slli_epi32(vb, 16)));
  }
}

// One stride-2 pair-plane row (dx 1) from a padded byte row: column phase 0 holds (X[2q], X[2q + 1])
// and phase 1 (X[2q + 1], X[2q + 2]), which are 32 consecutive codes widened to 16 bits, read as
// 16 int32 lanes.
inline void PairRowStride2FromBytes(const uint8_t* padded, int64_t pwp, bool x_signed, int32_t x_zp, uint32_t* row) {
  const __m512i zp = _mm512_set1_epi16(static_cast<int16_t>(x_zp));
  for (int64_t q = 0; q < pwp; q += 16) {
    const auto m = static_cast<__mmask16>(pwp - q >= 16 ? 0xFFFFu : (1u << (pwp - q)) - 1u);
    for (int64_t phase = 0; phase < 2; ++phase) {
      const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(padded + 2 * q + phase));
      const __m512i v = _mm512_sub_epi16(x_signed ? _mm512_cvtepi8_epi16(b) : _mm512_cvtepu8_epi16(b), zp);
      _mm512_mask_storeu_epi32(row + phase * pwp + q, m, v);
    }
  }
}
#elif defined(__AVX2__)
// The same on AVX2, 8 pairs a step; the last step's store is masked (a row's neighbour in the
// plane may already be written).
inline __m256i Avx2TailMask(int64_t left) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int32_t>(std::min<int64_t>(left, 8))),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

inline void Avx2StorePairs(uint32_t* dst, int64_t left, __m256i v) {
  if (left >= 8) _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), v);
  else _mm256_maskstore_epi32(reinterpret_cast<int*>(dst), Avx2TailMask(left), v);
}

// 16 pairs a step: the columns and their dx neighbours in 16 bits, interleaved (within each
// 128-bit half), then the halves put back in order.
inline void PairRowFromBytes(const uint8_t* padded, int64_t pw, int64_t dx, bool x_signed, int32_t x_zp,
                             uint32_t* row) {
  const __m256i zp = _mm256_set1_epi16(static_cast<int16_t>(x_zp));
  for (int64_t c = 0; c < pw; c += 16) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(padded + c));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(padded + c + dx));
    const __m256i va = _mm256_sub_epi16(x_signed ? _mm256_cvtepi8_epi16(a) : _mm256_cvtepu8_epi16(a), zp);
    const __m256i vb = _mm256_sub_epi16(x_signed ? _mm256_cvtepi8_epi16(b) : _mm256_cvtepu8_epi16(b), zp);
    const __m256i lo = _mm256_unpacklo_epi16(va, vb), hi = _mm256_unpackhi_epi16(va, vb);
    Avx2StorePairs(row + c, pw - c, _mm256_permute2x128_si256(lo, hi, 0x20));
    if (pw - c > 8) Avx2StorePairs(row + c + 8, pw - c - 8, _mm256_permute2x128_si256(lo, hi, 0x31));
  }
}

inline void PairRowStride2FromBytes(const uint8_t* padded, int64_t pwp, bool x_signed, int32_t x_zp, uint32_t* row) {
  const __m256i zp = _mm256_set1_epi16(static_cast<int16_t>(x_zp));
  for (int64_t q = 0; q < pwp; q += 8)
    for (int64_t phase = 0; phase < 2; ++phase) {
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(padded + 2 * q + phase));
      const __m256i v = _mm256_sub_epi16(x_signed ? _mm256_cvtepi8_epi16(b) : _mm256_cvtepu8_epi16(b), zp);
      Avx2StorePairs(row + phase * pwp + q, pwp - q, v);
    }
}
#endif

// The pair plane of one channel (FillPlane's layout and padding), built row by row through
// `line` (pw + dx int32: the padded plane row and dx zeros) from X's rows (kConvertRows) or from
// the converted image.
inline void FillPairs(const Q8DepthwiseShape& s, const Q8DepthwisePlane& l, const uint8_t* x, bool x_signed,
                      int32_t x_zp, const int32_t* __restrict image, int32_t* __restrict line,
                      uint32_t* __restrict pairs) {
  const int64_t x0 = std::min(l.pw, s.left), x1 = std::max(x0, std::min(l.pw, s.left + s.iw)), dx = s.dx;
  const auto run = static_cast<size_t>(x1 - x0) * sizeof(int32_t);
  const bool phased = s.sx > 1 || s.sy > 1;
#if defined(__AVX512BW__) || defined(__AVX2__)
  if (s.sx == 1 || (s.sx == 2 && dx == 1)) {  // rows from a byte row padded with the zero point's code
    // Every plane row is written whole (row_stride values), so no clearing of the plane first
    // (at stride 2 that was a memset of the whole plane per channel); the rows of a row phase
    // past ph are read only for dropped outputs.
    auto* padded = reinterpret_cast<uint8_t*>(line);  // pw + dx + 64 bytes or more
    std::memset(padded, static_cast<uint8_t>(x_zp), static_cast<size_t>(l.pw + dx + 48));
    for (int64_t y = 0; y < l.ph; ++y) {
      uint32_t* row = pairs + (y % s.sy) * l.phase_size + (y / s.sy) * l.row_stride;
      const int64_t sy_in = y - s.top;
      if (sy_in < 0 || sy_in >= s.ih) {
        std::fill(row, row + l.row_stride, 0u);
        continue;
      }
      if (x1 > x0) std::memcpy(padded + x0, x + sy_in * s.iw + (x0 - s.left), static_cast<size_t>(x1 - x0));
      if (s.sx == 1) PairRowFromBytes(padded, l.pw, dx, x_signed, x_zp, row);
      else PairRowStride2FromBytes(padded, l.pwp, x_signed, x_zp, row);
    }
    std::fill(pairs + l.plane, pairs + l.plane + kPad, 0u);
    return;
  }
#endif
  if (phased) std::fill(pairs, pairs + l.plane, 0u);
  std::fill(line, line + x0, 0);
  std::fill(line + x1, line + l.pw + dx, 0);
  for (int64_t y = 0; y < l.ph; ++y) {
    uint32_t* __restrict row = pairs + (y % s.sy) * l.phase_size + (y / s.sy) * l.row_stride;
    const int64_t sy_in = y - s.top;
    if (sy_in < 0 || sy_in >= s.ih) {
      if (!phased) std::fill(row, row + l.pw, 0u);
      continue;
    }
    if (run == 0) {
    } else if (kConvertRows) {
      ConvertRow(x + sy_in * s.iw + (x0 - s.left), x_signed, x_zp, x1 - x0, line + x0);
    } else {
      std::memcpy(line + x0, image + sy_in * s.iw + (x0 - s.left), run);
    }
    if (s.sx == 1) {
      for (int64_t c = 0; c < l.pw; ++c) row[c] = Pair(line[c], line[c + dx]);
    } else if (s.sx == 2) {
      const int64_t half = l.pw / 2;
      uint32_t* __restrict odd = row + l.pwp;
      for (int64_t q = 0; q < half; ++q) {
        row[q] = Pair(line[2 * q], line[2 * q + dx]);
        odd[q] = Pair(line[2 * q + 1], line[2 * q + 1 + dx]);
      }
      if (l.pw % 2 != 0) row[half] = Pair(line[l.pw - 1], line[l.pw - 1 + dx]);
    } else {
      for (int64_t c = 0; c < l.pw; ++c) row[(c % s.sx) * l.pwp + c / s.sx] = Pair(line[c], line[c + dx]);
    }
  }
  std::fill(pairs + l.plane, pairs + l.plane + kPad, 0u);
}

// The channel's image minus its zero point, in one run.
template <typename T>
inline void ConvertImage(const Q8DepthwiseShape& s, const T* __restrict x, int32_t x_zp, int32_t* __restrict image) {
  for (int64_t i = 0; i < s.ih * s.iw; ++i) image[i] = static_cast<int32_t>(x[i]) - x_zp;
}

// acc[0:n] (rounded up to whole vectors) = sum over the pair taps. With AVX-512 and rq, the sums
// are requantized in registers (Q8RequantizeImpl's formula: bias, scale, clamp in float, round
// half to even in the default rounding mode, zero point) into bytes[0:n] instead, and it returns
// true.
inline bool PairSums(const uint32_t* pairs, const PairTap* taps, int count, int64_t n, int32_t* acc,
                     const Q8DepthwiseRequant* rq, int64_t channel, uint8_t* bytes) {
#if defined(__AVX512BW__)
  if (rq != nullptr) {
    const __m512i bias = _mm512_set1_epi32(rq->bias != nullptr ? rq->bias[channel] : 0);
    const __m512 scale = _mm512_set1_ps(rq->scale[channel]);
    const __m512 lo = _mm512_set1_ps((rq->out_signed ? -128.0f : 0.0f) - static_cast<float>(rq->zero_point));
    const __m512 hi = _mm512_set1_ps((rq->out_signed ? 127.0f : 255.0f) - static_cast<float>(rq->zero_point));
    const __m512i zp = _mm512_set1_epi32(rq->zero_point);
    auto store = [&](int64_t t, __m512i v) {
      __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(v, bias)), scale);
      f = _mm512_min_ps(_mm512_max_ps(f, lo), hi);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(bytes + t),
                       _mm512_cvtepi32_epi8(_mm512_add_epi32(_mm512_cvtps_epi32(f), zp)));
    };
    if (count == 6) {  // 3x3 kernels: the weights and offsets stay in registers
      __m512i wv[6];
      const uint32_t* src[6];
      for (int k = 0; k < 6; ++k) wv[k] = _mm512_set1_epi32(taps[k].w2), src[k] = pairs + taps[k].offset;
      for (int64_t t = 0; t < n; t += 16) {
        __m512i v = _mm512_madd_epi16(_mm512_loadu_si512(src[0] + t), wv[0]);
        v = _mm512_add_epi32(v, _mm512_madd_epi16(_mm512_loadu_si512(src[1] + t), wv[1]));
        v = _mm512_add_epi32(v, _mm512_madd_epi16(_mm512_loadu_si512(src[2] + t), wv[2]));
        v = _mm512_add_epi32(v, _mm512_madd_epi16(_mm512_loadu_si512(src[3] + t), wv[3]));
        v = _mm512_add_epi32(v, _mm512_madd_epi16(_mm512_loadu_si512(src[4] + t), wv[4]));
        v = _mm512_add_epi32(v, _mm512_madd_epi16(_mm512_loadu_si512(src[5] + t), wv[5]));
        store(t, v);
      }
      return true;
    }
    for (int64_t t = 0; t < n; t += 16) {
      __m512i v = _mm512_setzero_si512();
      for (int k = 0; k < count; ++k)
        v = _mm512_add_epi32(v, _mm512_madd_epi16(_mm512_loadu_si512(pairs + taps[k].offset + t),
                                                   _mm512_set1_epi32(taps[k].w2)));
      store(t, v);
    }
    return true;
  }
  for (int64_t t = 0; t < n; t += 16) {
    __m512i v = _mm512_setzero_si512();
    for (int k = 0; k < count; ++k)
      v = _mm512_add_epi32(v, _mm512_madd_epi16(_mm512_loadu_si512(pairs + taps[k].offset + t),
                                                 _mm512_set1_epi32(taps[k].w2)));
    _mm512_storeu_si512(acc + t, v);
  }
#elif defined(__AVX2__)
  auto load = [](const uint32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); };
  // 3x3 kernels (6 pair taps): the weights and sources stay in registers.
  const bool three = count == 6;
  __m256i w6[6] = {};
  const uint32_t* s6[6] = {};
  if (three)
    for (int k = 0; k < 6; ++k) w6[k] = _mm256_set1_epi32(taps[k].w2), s6[k] = pairs + taps[k].offset;
  auto sum = [&](int64_t t) {
    if (three) {
      __m256i v = _mm256_madd_epi16(load(s6[0] + t), w6[0]);
      v = _mm256_add_epi32(v, _mm256_madd_epi16(load(s6[1] + t), w6[1]));
      v = _mm256_add_epi32(v, _mm256_madd_epi16(load(s6[2] + t), w6[2]));
      v = _mm256_add_epi32(v, _mm256_madd_epi16(load(s6[3] + t), w6[3]));
      v = _mm256_add_epi32(v, _mm256_madd_epi16(load(s6[4] + t), w6[4]));
      return _mm256_add_epi32(v, _mm256_madd_epi16(load(s6[5] + t), w6[5]));
    }
    __m256i v = _mm256_setzero_si256();
    for (int k = 0; k < count; ++k)
      v = _mm256_add_epi32(v, _mm256_madd_epi16(load(pairs + taps[k].offset + t), _mm256_set1_epi32(taps[k].w2)));
    return v;
  };
  if (rq != nullptr) {  // Q8RequantizeImpl's arithmetic, 8 values a step into bytes
    const __m256i bias = _mm256_set1_epi32(rq->bias != nullptr ? rq->bias[channel] : 0);
    const __m256 scale = _mm256_set1_ps(rq->scale[channel]);
    const __m256 lo = _mm256_set1_ps((rq->out_signed ? -128.0f : 0.0f) - static_cast<float>(rq->zero_point));
    const __m256 hi = _mm256_set1_ps((rq->out_signed ? 127.0f : 255.0f) - static_cast<float>(rq->zero_point));
    const __m256i zp = _mm256_set1_epi32(rq->zero_point);
    auto codes = [&](__m256i v) {
      __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(v, bias)), scale);
      f = _mm256_min_ps(_mm256_max_ps(f, lo), hi);
      return _mm256_add_epi32(_mm256_cvtps_epi32(f), zp);
    };
    // The low byte of each int32 of two vectors: bytes 0, 4, 8, 12 of each 128-bit half to
    // dword 0 (first vector) or 1 (second), then the dwords put in order: 16 codes.
    const __m256i pick0 = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8,
                                           12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i pick1 = _mm256_setr_epi8(-1, -1, -1, -1, 0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                           -1, 0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i join = _mm256_setr_epi32(0, 4, 1, 5, 2, 3, 6, 7);
    for (int64_t t = 0; t < n; t += 16) {
      const __m256i q = _mm256_or_si256(_mm256_shuffle_epi8(codes(sum(t)), pick0),
                                        _mm256_shuffle_epi8(codes(sum(t + 8)), pick1));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(bytes + t),
                       _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(q, join)));
    }
    return true;
  }
  for (int64_t t = 0; t < n; t += 8) _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + t), sum(t));
#else
  for (int64_t t = 0; t < n; ++t) {
    uint32_t v = 0;
    for (int k = 0; k < count; ++k) {
      const uint32_t p = pairs[taps[k].offset + t], w2 = static_cast<uint32_t>(taps[k].w2);
      v += static_cast<uint32_t>(static_cast<int16_t>(p & 0xFFFF) * static_cast<int16_t>(w2 & 0xFFFF) +
                                 static_cast<int16_t>(p >> 16) * static_cast<int16_t>(w2 >> 16));
    }
    acc[t] = static_cast<int32_t>(v);
  }
#endif
  (void)rq, (void)channel, (void)bytes;
  return false;
}

template <int kUnused = 0>
void Q8DepthwiseImpl(const Q8DepthwiseShape& s, int64_t count, const uint8_t* x, bool x_signed, int32_t x_zp,
                     const int32_t* w, const Q8DepthwiseRequant* rq, void* out, int32_t* scratch) {
  const Q8DepthwisePlane l = Q8DepthwiseLayout(s);
  int32_t* plane = scratch;
  auto* acc = reinterpret_cast<uint32_t*>(scratch + l.acc_at);
  int32_t* line = scratch + l.line_at;
  auto* bytes = reinterpret_cast<uint8_t*>(scratch + l.bytes_at);
  auto* pairs = reinterpret_cast<uint32_t*>(scratch + l.pairs_at);
  int32_t* image = scratch + l.image_at;
  const int64_t in_size = s.ih * s.iw, out_size = s.oh * s.ow, taps = s.kh * s.kw;
  PairTap pair_taps[kMaxPairTaps];
  for (int64_t c = 0; c < count; ++c) {
    const uint8_t* xc = x + c * in_size;
    const int pair_count = MakePairTaps(s, l, w + c * taps, pair_taps);
    if (!kConvertRows || pair_count == 0) {
      if (x_signed) ConvertImage(s, reinterpret_cast<const int8_t*>(xc), x_zp, image);
      else ConvertImage(s, xc, x_zp, image);
    }
    bool requantized = false;
    if (pair_count > 0) {
      FillPairs(s, l, xc, x_signed, x_zp, image, line, pairs);
      requantized = PairSums(pairs, pair_taps, pair_count, l.acc, reinterpret_cast<int32_t*>(acc), rq, c, bytes);
    } else {
      FillPlane(s, l, plane, line, image);
      AccumulateTaps(s, l, plane, w + c * taps, acc);
    }
    const auto* a = reinterpret_cast<const int32_t*>(acc);
    if (rq == nullptr) {
      int32_t* o = static_cast<int32_t*>(out) + c * out_size;
      for (int64_t y = 0; y < s.oh; ++y)
        std::memcpy(o + y * s.ow, a + y * l.row_stride, static_cast<size_t>(s.ow) * sizeof(int32_t));
      continue;
    }
    // All of acc requantized in one vectorized run (the columns past ow too), then the rows' bytes.
    if (!requantized) {
      const int32_t bias = rq->bias != nullptr ? rq->bias[c] : 0;
      Q8RequantizeImpl(a, l.acc, bias, rq->scale[c], rq->zero_point, rq->out_signed, bytes);
    }
    uint8_t* o = static_cast<uint8_t*>(out) + c * out_size;
    if (l.row_stride == s.ow) std::memcpy(o, bytes, static_cast<size_t>(out_size));
    else
      for (int64_t y = 0; y < s.oh; ++y) std::memcpy(o + y * s.ow, bytes + y * l.row_stride, static_cast<size_t>(s.ow));
  }
}

}  // namespace
}  // namespace onyx::linalg
