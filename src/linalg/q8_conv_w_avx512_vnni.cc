// Q8ConvW (q8_conv_w.h): the implicit-im2col panel packer for the weight-stationary int8 GEMM
// driver. The image is first copied, as stored codes, into a plane per channel padded with the
// zero point on every side the kernel reaches (plus slack), so no tap needs a bounds check. A
// panel's 32 output pixels fall into a few runs within one output row ("segments"); for im2col
// row (c, i, j) each segment's codes lie at a fixed stride along one padded row, so one plain
// load per segment fetches them (stride 1: 32 bytes; stride 2: the even bytes of 64, narrowed
// by vpmovwb) and a blend keeps the segment's lanes; other strides gather lane by lane. Four
// rows are then interleaved into the kernel's [32][4] layout: the codes make one trip through
// L1 instead of an im2col buffer and a repack.
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
#include "linalg/gemm.h"
#include "linalg/q8_conv_w.h"
#include "linalg/q8_gemm_w_driver.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {
namespace {

constexpr int kNr = 32, kGroup = 4;
constexpr int64_t kSlack = 64;  // bytes before and after the padded planes: a segment's load may start
                                // up to 31 strides before its first pixel and read 64 bytes

struct ConvSource {
  const Q8ConvShape* s;
  const uint8_t* planes;  // [channels][ph][pw] stored codes, zero point in the padding
  int64_t ph, pw;
  int64_t k;  // channels * kh * kw
};

struct Segment {
  int64_t base;  // offset in a padded plane of lane 0's code for tap (0, 0) (lane dst's minus dst strides)
  __mmask32 lanes;
};

// Row (c, i, j) of the implicit im2col: `at` is channel c's padded plane plus the tap's offset.
// kStride: the horizontal stride when 1 or 2, else 0 (any, lane by lane).
template <int kStride>
inline __m256i GatherRow(const Segment* seg, int nseg, const uint8_t* at, int64_t sx) {
  if constexpr (kStride == 1) {
    __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at + seg[0].base));
    for (int t = 1; t < nseg; ++t)
      v = _mm256_mask_blend_epi8(seg[t].lanes, v, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at + seg[t].base)));
    return v;
  } else if constexpr (kStride == 2) {
    __m512i v = _mm512_loadu_si512(at + seg[0].base);
    for (int t = 1; t < nseg; ++t) v = _mm512_mask_blend_epi16(seg[t].lanes, v, _mm512_loadu_si512(at + seg[t].base));
    return _mm512_cvtepi16_epi8(v);  // lane l: byte 2l
  } else {
    alignas(32) uint8_t lanes[kNr] = {};
    for (int t = 0; t < nseg; ++t)
      for (int l = 0; l < kNr; ++l)
        if (seg[t].lanes >> l & 1) lanes[l] = at[seg[t].base + l * sx];
    return _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes));
  }
}

template <int kStride>
void PackConvPanel(const void* source, int64_t j0, int cols, uint8_t* panel) {
  const auto& src = *static_cast<const ConvSource*>(source);
  const Q8ConvShape& s = *src.s;
  Segment seg[kNr];
  int nseg = 0;
  for (int l = 0; l < cols;) {
    const int64_t p = j0 + l, oy = p / s.ow, ox = p % s.ow;
    const int len = static_cast<int>(std::min<int64_t>(cols - l, s.ow - ox));
    const uint64_t bits = (uint64_t{1} << (l + len)) - (uint64_t{1} << l);
    seg[nseg++] = {oy * s.sy * src.pw + ox * s.sx - l * s.sx, static_cast<__mmask32>(bits)};
    l += len;
  }
  const int64_t plane = src.ph * src.pw, row_step = s.dy * src.pw;
  int64_t i = 0, j = 0;  // the im2col row's tap, k = (c * kh + i) * kw + j
  const uint8_t* channel = src.planes;
  const uint8_t* at = channel;  // channel + i * dy * pw + j * dx
  auto next = [&] {
    const __m256i v = GatherRow<kStride>(seg, nseg, at, s.sx);
    if (++j < s.kw) {
      at += s.dx;
    } else if (j = 0, ++i < s.kh) {
      at = channel + i * row_step;
    } else {
      i = 0;
      channel += plane;
      at = channel;
    }
    return v;
  };
  const int64_t whole = src.k / kGroup;
  for (int64_t q = 0; q < whole; ++q) {
    const __m256i r0 = next(), r1 = next(), r2 = next(), r3 = next();
    Q8WInterleave4(r0, r1, r2, r3, panel + q * kNr * kGroup);
  }
  if (const int64_t rest = src.k - whole * kGroup; rest > 0) {  // past K: stored code 0, outside the pixel sums
    __m256i r[kGroup];
    for (int64_t t = 0; t < kGroup; ++t) r[t] = t < rest ? next() : _mm256_setzero_si256();
    Q8WInterleave4(r[0], r[1], r[2], r[3], panel + whole * kNr * kGroup);
  }
}

}  // namespace

void Q8ConvW(const PackedQ8W& w, const Q8ConvShape& s, const void* image, bool x_signed, int32_t x_zero,
             const Q8Output& out, ThreadPool* pool) {
  if (s.oh <= 0 || s.ow <= 0 || w.m() <= 0) return;
  // The padded planes reach every tap of every output pixel: rows [-top, (oh - 1) * sy + (kh - 1) * dy].
  const int64_t ph = std::max(s.ih + s.top, (s.oh - 1) * s.sy + (s.kh - 1) * s.dy + 1);
  const int64_t pw = std::max(s.iw + s.left, (s.ow - 1) * s.sx + (s.kw - 1) * s.dx + 1);
  const int64_t bytes = s.channels * ph * pw + 2 * kSlack;
  // Per-thread, grown on demand and kept (as the driver's panel): no page faults per call.
  thread_local AlignedFloats buffer;
  if (static_cast<int64_t>(buffer.size()) * 4 < bytes) buffer = AlignedFloats(static_cast<size_t>(CeilDiv(bytes, int64_t{4})));
  auto* planes = reinterpret_cast<uint8_t*>(buffer.data()) + kSlack;
  const uint8_t flip = x_signed ? 0x80 : 0, pad = static_cast<uint8_t>(x_zero) ^ flip;
  const auto* x = static_cast<const uint8_t*>(image);
  // Each byte written once (the padding, then the image rows; a memset of the whole buffer
  // first wrote the image's bytes twice), the channels split over the threads.
  std::memset(planes - kSlack, pad, static_cast<size_t>(kSlack));
  std::memset(planes + s.channels * ph * pw, pad, static_cast<size_t>(kSlack));
  const int64_t right = pw - s.left - s.iw, bottom = ph - s.top - s.ih;
  ThreadPool::For(pool, s.channels, static_cast<double>(ph * pw) / 4.0, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      uint8_t* plane = planes + c * ph * pw;
      std::memset(plane, pad, static_cast<size_t>(s.top * pw + s.left));  // top rows, then row 0's left
      for (int64_t y = 0; y < s.ih; ++y) {
        const uint8_t* from = x + (c * s.ih + y) * s.iw;
        uint8_t* to = plane + (y + s.top) * pw + s.left;
        if (flip == 0) std::memcpy(to, from, static_cast<size_t>(s.iw));
        else for (int64_t q = 0; q < s.iw; ++q) to[q] = from[q] ^ flip;
        // This row's right padding and the next row's left one are adjacent.
        const int64_t gap = right + (y + 1 < s.ih ? s.left : 0);
        std::memset(to + s.iw, pad, static_cast<size_t>(gap));
      }
      std::memset(plane + (s.top + s.ih) * pw, pad, static_cast<size_t>(bottom * pw));
    }
  });
  const ConvSource source{&s, planes, ph, pw, s.channels * s.kh * s.kw};
  const Q8WPanelFn pack = s.sx == 1 ? &PackConvPanel<1> : s.sx == 2 ? &PackConvPanel<2> : &PackConvPanel<0>;
  Q8GemmWDriver(w, s.oh * s.ow, pack, &source, x_zero + (x_signed ? 128 : 0), out, pool);
}

}  // namespace onyx::linalg
#endif  // __x86_64__
