// PackedQ8DepthwiseNhwc's packing, the scalar reference and the dispatch of Q8DepthwiseNhwc
// (portable: the AVX-512 VNNI kernel is q8_dwconv_nhwc_avx512_vnni.cc).
#include "linalg/q8_dwconv_nhwc.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "base/int_math.h"
#include "linalg/q8_dwconv_nhwc_kernel.h"
#include "linalg/q8_gemm.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {

PackedQ8DepthwiseNhwc::PackedQ8DepthwiseNhwc(int64_t channels, int64_t kh, int64_t kw, const void* w, bool w_signed,
                                             const int32_t* zero_points, bool zero_per_channel) {
  if (channels <= 0 || kh <= 0 || kw <= 0) return;
  const int64_t taps = kh * kw;
  const auto* bytes = static_cast<const uint8_t*>(w);
  std::vector<int8_t> plain(static_cast<size_t>(channels * taps));
  std::vector<int32_t> sums(static_cast<size_t>(channels), 0);
  for (int64_t c = 0; c < channels; ++c) {
    const int32_t z = zero_points == nullptr ? 0 : zero_points[zero_per_channel ? c : 0];
    for (int64_t t = 0; t < taps; ++t) {
      const uint8_t b = bytes[c * taps + t];
      const int32_t v = (w_signed ? static_cast<int8_t>(b) : static_cast<int32_t>(b)) - z;
      if (v < -128 || v > 127) return;  // vpdpbusd multiplies by signed bytes
      plain[static_cast<size_t>(c * taps + t)] = static_cast<int8_t>(v);
      sums[static_cast<size_t>(c)] += v;
    }
  }
  const int64_t blocks = CeilDiv(channels, kBlock), groups = CeilDiv(kh, int64_t{4});
  packed_.assign(static_cast<size_t>(blocks * kw * groups * 4 * kBlock * 4), 0);
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t j = 0; j < kw; ++j)
      for (int64_t g = 0; g < groups; ++g)
        for (int64_t k = 0; k < 4; ++k)
          for (int64_t lane = 0; lane < 4; ++lane)
            for (int64_t d = 0; d < 4; ++d) {
              const int64_t c = b * kBlock + 16 * lane + 4 * k + d;
              if (c >= channels) continue;
              for (int64_t q = 0; q < 4 && g * 4 + q < kh; ++q)
                packed_[static_cast<size_t>(((((b * kw + j) * groups + g) * 4 + k) * 16 + lane * 4 + d) * 4 + q)] =
                    plain[static_cast<size_t>(c * taps + (g * 4 + q) * kw + j)];
            }
  c_ = channels, kh_ = kh, kw_ = kw;
  plain_ = std::move(plain);
  sums_ = std::move(sums);
}

namespace {

void CheckShape(const PackedQ8DepthwiseNhwc& w, const Q8DepthwiseShape& s) {
  if (w.empty() || w.kh() != s.kh || w.kw() != s.kw)
    throw std::invalid_argument("Q8DepthwiseNhwc: the packed weights do not match the shape");
}

float Lo(const Q8DepthwiseRequant& rq) { return (rq.out_signed ? -128.0f : 0.0f) - static_cast<float>(rq.zero_point); }
float Hi(const Q8DepthwiseRequant& rq) { return (rq.out_signed ? 127.0f : 255.0f) - static_cast<float>(rq.zero_point); }

}  // namespace

void Q8DepthwiseNhwcReference(const PackedQ8DepthwiseNhwc& w, const Q8DepthwiseShape& s, int64_t batch, const void* x,
                              bool x_signed, int32_t x_zp, const Q8DepthwiseRequant& rq, void* out) {
  CheckShape(w, s);
  const int64_t ch = w.channels();
  const auto* xb = static_cast<const uint8_t*>(x);
  auto* yb = static_cast<uint8_t*>(out);
  const float lo = Lo(rq), hi = Hi(rq);
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t oy = 0; oy < s.oh; ++oy)
      for (int64_t ox = 0; ox < s.ow; ++ox)
        for (int64_t c = 0; c < ch; ++c) {
          uint32_t acc = rq.bias != nullptr ? static_cast<uint32_t>(rq.bias[c]) : 0u;
          for (int64_t i = 0; i < s.kh; ++i)
            for (int64_t j = 0; j < s.kw; ++j) {
              const int64_t y = oy * s.sy + i * s.dy - s.top, xx = ox * s.sx + j * s.dx - s.left;
              if (y < 0 || y >= s.ih || xx < 0 || xx >= s.iw) continue;  // the zero point: nothing
              const uint8_t b = xb[((n * s.ih + y) * s.iw + xx) * ch + c];
              const int32_t v = x_signed ? static_cast<int8_t>(b) : static_cast<int32_t>(b);
              acc += static_cast<uint32_t>((v - x_zp) * w.plain()[c * w.taps() + i * s.kw + j]);
            }
          const float f = std::min(std::max(static_cast<float>(static_cast<int32_t>(acc)) * rq.scale[c], lo), hi);
          yb[((n * s.oh + oy) * s.ow + ox) * ch + c] =
              static_cast<uint8_t>(static_cast<int32_t>(std::nearbyint(f)) + rq.zero_point);
        }
}

bool Q8DepthwiseNhwcFast() {
#if defined(__x86_64__)
  return Q8GemmWAvailable();  // AVX-512 VNNI selected (ForceIsa / ONYX_LINALG_ISA apply)
#else
  return false;
#endif
}

void Q8DepthwiseNhwc(const PackedQ8DepthwiseNhwc& w, const Q8DepthwiseShape& s, int64_t batch, const void* x,
                     bool x_signed, int32_t x_zp, const Q8DepthwiseRequant& rq, void* out, ThreadPool* pool) {
  CheckShape(w, s);
  if (!Q8DepthwiseNhwcFast() || w.kh() > kQ8DepthwiseNhwcMaxRows) return Q8DepthwiseNhwcReference(w, s, batch, x, x_signed, x_zp, rq, out);
#if defined(__x86_64__)
  constexpr int64_t kB = PackedQ8DepthwiseNhwc::kBlock;
  const int64_t ch = w.channels(), padded = CeilDiv(ch, kB) * kB;
  // Per call, in the packed order (channel 64 b + 16 L + 4 k + d at 64 b + 16 k + 4 L + d).
  thread_local std::vector<int32_t> init;
  thread_local std::vector<float> scale;
  thread_local std::vector<uint8_t> pad_row;
  init.assign(static_cast<size_t>(padded), 0);
  scale.assign(static_cast<size_t>(padded), 0.0f);
  // Codes enter vpdpbusd as uint8: int8 ones flipped (+ 128), and their zero point with them.
  const uint32_t zx = static_cast<uint32_t>(x_signed ? x_zp + 128 : x_zp);
  for (int64_t c = 0; c < ch; ++c) {
    const int64_t b = c / kB, r = c % kB, lane = r / 16, k = (r % 16) / 4, d = r % 4;
    const auto at = static_cast<size_t>(b * kB + 16 * k + 4 * lane + d);
    const uint32_t bias = rq.bias != nullptr ? static_cast<uint32_t>(rq.bias[c]) : 0u;
    init[at] = static_cast<int32_t>(bias - zx * static_cast<uint32_t>(w.sums()[c]));
    scale[at] = rq.scale[c];
  }
  pad_row.assign(static_cast<size_t>(padded + kB), static_cast<uint8_t>(x_zp));
  Q8DepthwiseNhwcCall call;
  call.w = w.data(), call.channels = ch;
  call.init = init.data(), call.scale = scale.data(), call.pad_row = pad_row.data();
  call.lo = Lo(rq), call.hi = Hi(rq), call.zero_point = rq.zero_point;
  call.x_signed = x_signed, call.out_signed = rq.out_signed;
  const auto* xb = static_cast<const uint8_t*>(x);
  auto* yb = static_cast<uint8_t*>(out);
  ThreadPool::For(pool, batch * s.oh * s.ow, 2.0 * static_cast<double>(padded * w.taps()) / 8.0,
                  [&](int64_t p0, int64_t p1) { Q8DepthwiseNhwcAvx512Vnni(call, s, xb, yb, p0, p1); });
#endif
}

}  // namespace onyx::linalg
