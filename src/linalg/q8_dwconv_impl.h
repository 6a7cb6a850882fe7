// Q8DepthwiseChannel's body, instantiated by each ISA file with its compiler flags (plain loops
// the compiler vectorizes). Internal linkage on purpose (see f32_gemm_tile_impl.h).
#pragma once

#include <algorithm>
#include <cstdint>

#include "linalg/q8_dwconv.h"

namespace onyx::linalg {
namespace {

inline int64_t PlaneHeight(const Q8DepthwiseShape& s) { return (s.oh - 1) * s.sy + (s.kh - 1) * s.dy + 1; }
inline int64_t PlaneWidth(const Q8DepthwiseShape& s) { return (s.ow - 1) * s.sx + (s.kw - 1) * s.dx + 1; }

template <int kUnused = 0>
void Q8DepthwiseChannelImpl(const Q8DepthwiseShape& s, const uint8_t* x, bool x_signed, int32_t x_zp, const int32_t* w,
                            int32_t* plane, int32_t* acc) {
  const int64_t ph = PlaneHeight(s), pw = PlaneWidth(s);
  // Columns [x0, x1) of a plane row come from the image, the rest is padding.
  const int64_t x0 = std::min(pw, s.left), x1 = std::max(x0, std::min(pw, s.left + s.iw));
  for (int64_t y = 0; y < ph; ++y) {
    const int64_t sy_in = y - s.top;
    int32_t* dst = plane + y * pw;
    if (sy_in < 0 || sy_in >= s.ih) {
      std::fill(dst, dst + pw, 0);
      continue;
    }
    std::fill(dst, dst + x0, 0);
    std::fill(dst + x1, dst + pw, 0);
    const uint8_t* src = x + sy_in * s.iw - s.left;
    if (x_signed)
      for (int64_t xx = x0; xx < x1; ++xx) dst[xx] = static_cast<int8_t>(src[xx]) - x_zp;
    else
      for (int64_t xx = x0; xx < x1; ++xx) dst[xx] = src[xx] - x_zp;
  }
  for (int64_t y = 0; y < s.oh; ++y) {
    int32_t* o = acc + y * s.ow;
    std::fill(o, o + s.ow, 0);
    for (int64_t i = 0; i < s.kh; ++i) {
      const int32_t* row = plane + (y * s.sy + i * s.dy) * pw;
      for (int64_t j = 0; j < s.kw; ++j) {
        const int32_t wv = w[i * s.kw + j];
        const int32_t* src = row + j * s.dx;
        // uint32: the int32 wrap ONNX allows, without signed-overflow UB.
        auto* uo = reinterpret_cast<uint32_t*>(o);
        if (s.sx == 1)
          for (int64_t xx = 0; xx < s.ow; ++xx) uo[xx] += static_cast<uint32_t>(wv) * static_cast<uint32_t>(src[xx]);
        else
          for (int64_t xx = 0; xx < s.ow; ++xx)
            uo[xx] += static_cast<uint32_t>(wv) * static_cast<uint32_t>(src[xx * s.sx]);
      }
    }
  }
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

}  // namespace
}  // namespace onyx::linalg
