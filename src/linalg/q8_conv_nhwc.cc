// PackedQ8Nhwc's packing (portable) and where the direct channels-last int8 convolution runs;
// the kernels are q8_conv_nhwc_amx_32x32.cc, q8_conv_nhwc_avx512_vnni.cc and q8_conv_nhwc_avx2.cc.
#include "linalg/q8_conv_nhwc.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string_view>

#include "base/int_math.h"
#include "linalg/q8_conv_nhwc_amx.h"
#include "linalg/q8_conv_nhwc_avx2.h"
#include "linalg/q8_conv_nhwc_avx512_vnni.h"
#include "linalg/q8_gemm_kernel.h"

namespace onyx::linalg {

PackedQ8Nhwc::PackedQ8Nhwc(int64_t m, int64_t c, int64_t kh, int64_t kw, const void* w, bool w_signed,
                           const int32_t* zero_points, bool zero_per_channel, const PackMemory* memory) {
  if (m <= 0 || c <= 0 || c % 4 != 0 || kh <= 0 || kw <= 0) return;
  const int32_t shift = w_signed ? 0 : 128;  // uint8 W is stored - 128, its zero point too
  for (int64_t j = 0; j < (zero_per_channel ? m : 1); ++j)
    if ((zero_points != nullptr ? zero_points[j] : 0) - shift != 0) return;
  m_ = m, c_ = c, taps_ = kh * kw;
  const int64_t panels = CeilDiv(m, kPanel), groups = c / 4;
  // Slack after the last panel: an AMX B tile is 16 groups, and where C is not a multiple of 64
  // the last tap's tile reads up to 15 groups past it (those meet zeros in A).
  const int64_t slack = 15 * kPanel * 4;
  const int64_t packed_bytes = panels * taps_ * groups * kPanel * 4 + slack;
  data_ = FreshPack(memory, static_cast<size_t>(CeilDiv(packed_bytes, int64_t{sizeof(float)})));
  std::memset(data_.data(), 0, data_.size() * sizeof(float));  // zero past M and in the slack
  sums_.assign(static_cast<size_t>(m), 0);
  const auto* bytes = static_cast<const uint8_t*>(w);
  const uint8_t flip = w_signed ? 0 : 0x80;
  // Written in the packed order: a panel's 64 filters (64 * C * taps bytes, in L2) are read in
  // place for each of its taps. Scattering each filter's codes across the panel instead missed
  // the cache on nearly every store (resnet50's QOperator convs: most of their creation).
  auto* out = reinterpret_cast<int8_t*>(data_.data());
  for (int64_t panel = 0; panel < panels; ++panel) {
    const int64_t rows = std::min(kPanel, m - panel * kPanel);
    for (int64_t t = 0; t < taps_; ++t)
      for (int64_t g = 0; g < groups; ++g, out += kPanel * 4)
        for (int64_t r = 0; r < rows; ++r) {
          const uint8_t* src = bytes + ((panel * kPanel + r) * c + g * 4) * taps_ + t;
          for (int64_t q = 0; q < 4; ++q) out[r * 4 + q] = static_cast<int8_t>(src[q * taps_] ^ flip);
        }
  }
  for (int64_t o = 0; o < m; ++o) {
    int32_t sum = 0;
    for (int64_t i = 0; i < c * taps_; ++i) sum += static_cast<int8_t>(bytes[o * c * taps_ + i] ^ flip);
    sums_[static_cast<size_t>(o)] = sum;
  }
}

#if !defined(__x86_64__)
bool Q8ConvNhwcAvailable() { return false; }
void Q8ConvNhwc(const PackedQ8Nhwc&, const Q8ConvNhwcShape&, const void*, bool, int32_t, const Q8Output&, ThreadPool*,
                const uint8_t*, const Q8ConvAddend*) {
  throw std::logic_error("Q8ConvNhwc: no AVX-512 VNNI on this build");
}
void Q8ConvNhwcLutInRegisters(bool) {}
#else
bool Q8ConvNhwcAvailable() { return Q8GemmWAvailable() || Q8ConvNhwcAvx2Selected(); }

// A tile row holds 64 input codes: at C = 16 three quarters of each are padding and the tiles lost
// to the VNNI kernel (3x3 16 -> 32 at 160x160 0.85x, 1x1 16 -> 16 0.53x); from C = 32 on they won
// (3x3 32 -> 32 at 80x80 1.35x, 64 -> 64 at 56x56 3.4x; 1 thread, min of 60 calls).
bool Q8ConvNhwcAmxWorthIt(const PackedQ8Nhwc& w, const Q8ConvNhwcShape&) { return w.channels() >= 32; }

// Chosen here, in portable code: an AVX2-only CPU must never enter a function compiled for AVX-512.
void Q8ConvNhwc(const PackedQ8Nhwc& w, const Q8ConvNhwcShape& s, const void* image, bool x_signed, int32_t x_zero,
                const Q8Output& out, ThreadPool* pool, const uint8_t* lut, const Q8ConvAddend* add) {
  if (out.kind != Q8Output::kQuantized || out.transposed) throw std::invalid_argument("Q8ConvNhwc: unsupported output");
  if (lut != nullptr && add != nullptr) throw std::invalid_argument("Q8ConvNhwc: a lut and an addend together");
  if (w.empty() || w.channels() != s.channels || w.taps() != s.kh * s.kw)
    throw std::invalid_argument("Q8ConvNhwc: the packed weights do not match the shape");
  if (std::string_view(SelectedQ8GemmKernel().isa) == "amx" && Q8ConvNhwcAmxWorthIt(w, s))
    return Q8ConvNhwcAmx(w, s, image, x_signed, x_zero, out, pool, lut, add);
  if (Q8GemmWAvailable()) return Q8ConvNhwcAvx512Vnni(w, s, image, x_signed, x_zero, out, pool, lut, add);
  Q8ConvNhwcAvx2(w, s, image, x_signed, x_zero, out, pool, lut, add);
}
#endif

}  // namespace onyx::linalg
