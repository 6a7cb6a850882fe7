// Q8ConvNhwc (the direct channels-last int8 convolution) against a scalar reference written
// here: the exact int32 sum over the window (padding taps read the zero point), requantized as
// ONNX Runtime does (float clamp, round half to even, zero point). Kernels 1x1 to 5x5, strides,
// dilation, asymmetric padding, pixel counts that are not a multiple of the 6-pixel tile, output
// channels past and short of the 64-channel panel, int8 and uint8 images and weights, per-tensor
// and per-channel scales, no bias, threads, small and large weights (both task orders), a row
// stride wider than M. Runs where the CPU has AVX-512 VNNI.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "linalg/isa_variant_test.h"
#include "linalg/q8_conv_nhwc.h"
#include "linalg/q8_conv_nhwc_reference.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {
namespace {

class Q8ConvNhwcTest : public Q8VnniTest {};

struct Case {
  int64_t m, c, ih, iw, kh, kw, sy, sx, dy, dx, top, left, bottom, right;
  bool w_signed, x_signed;
  bool per_channel = true, bias = true;
  int64_t extra_ldc = 0;
  double scale_boost = 1.0;                 // scales this many times larger: results far past the range
  int32_t zp_signed = 3, zp_unsigned = 125;  // the output's zero points
};

void Check(const Case& p, uint32_t seed, ThreadPool* pool = nullptr) {
  Q8ConvNhwcShape s;
  s.channels = p.c, s.ih = p.ih, s.iw = p.iw, s.kh = p.kh, s.kw = p.kw, s.sy = p.sy, s.sx = p.sx;
  s.dy = p.dy, s.dx = p.dx, s.top = p.top, s.left = p.left;
  s.oh = (p.ih + p.top + p.bottom - ((p.kh - 1) * p.dy + 1)) / p.sy + 1;
  s.ow = (p.iw + p.left + p.right - ((p.kw - 1) * p.dx + 1)) / p.sx + 1;
  const int64_t pixels = s.oh * s.ow, ldc = p.m + p.extra_ldc;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<uint8_t> w(static_cast<size_t>(p.m * p.c * p.kh * p.kw)), x(static_cast<size_t>(p.ih * p.iw * p.c));
  for (auto& v : w) v = static_cast<uint8_t>(byte(rng));
  for (auto& v : x) v = static_cast<uint8_t>(byte(rng));
  const int32_t w_zero = p.w_signed ? 0 : 128;  // symmetric as stored
  std::vector<int32_t> w_zp(static_cast<size_t>(p.m), w_zero);
  const int32_t x_zp = p.x_signed ? -9 : 121;
  const Q8ConvNhwcSums reference = ReferenceQ8ConvNhwcSums(s, p.m, w, p.w_signed, x, p.x_signed, x_zp);
  const std::vector<int64_t>& ref = reference.sums;
  const int64_t peak = reference.peak;
  const PackedQ8Nhwc packed(p.m, p.c, p.kh, p.kw, w.data(), p.w_signed, w_zp.data(), true);
  ASSERT_FALSE(packed.empty());
  std::vector<float> scale(static_cast<size_t>(p.m));
  std::vector<int32_t> bias(static_cast<size_t>(p.m));
  for (int64_t i = 0; i < p.m; ++i) {
    scale[static_cast<size_t>(i)] = static_cast<float>((70.0 + 17.0 * static_cast<double>(i % 7)) / peak * p.scale_boost);
    bias[static_cast<size_t>(i)] = p.bias ? static_cast<int32_t>((i * 7907) % 3000) - 1500 : 0;
  }
  for (bool out_signed : {false, true}) {
    std::vector<uint8_t> q(static_cast<size_t>(pixels * ldc + 5), 0xA5);
    Q8Output o;
    o.kind = Q8Output::kQuantized;
    o.c = q.data();
    o.ldc = ldc;
    o.scale = scale.data();
    o.scale_per_column = p.per_channel;
    o.bias_int = p.bias ? bias.data() : nullptr;
    o.zero_point = out_signed ? p.zp_signed : p.zp_unsigned;
    o.out_signed = out_signed;
    Q8ConvNhwc(packed, s, x.data(), p.x_signed, x_zp, o, pool);
    for (int64_t px = 0; px < pixels; ++px)
      for (int64_t ch = 0; ch < ldc; ++ch) {
        const uint8_t have = q[static_cast<size_t>(px * ldc + ch)];
        if (ch >= p.m) {
          ASSERT_EQ(have, 0xA5) << "wrote past M at pixel " << px;
          continue;
        }
        const float sc = scale[static_cast<size_t>(p.per_channel ? ch : 0)];
        const float f =
            static_cast<float>(static_cast<int32_t>(ref[static_cast<size_t>(px * p.m + ch)]) + bias[static_cast<size_t>(ch)]) * sc;
        const float lo = (out_signed ? -128.0f : 0.0f) - static_cast<float>(o.zero_point);
        const float hi = (out_signed ? 127.0f : 255.0f) - static_cast<float>(o.zero_point);
        const auto expect = static_cast<int32_t>(std::nearbyint(std::min(std::max(f, lo), hi))) + o.zero_point;
        ASSERT_EQ(out_signed ? static_cast<int8_t>(have) : have, expect) << "pixel " << px << " channel " << ch;
      }
    for (size_t i = static_cast<size_t>(pixels * ldc); i < q.size(); ++i) ASSERT_EQ(q[i], 0xA5) << "wrote past the output";
  }
}

TEST_F(Q8ConvNhwcTest, PointwiseAndThreeByThree) {
  uint32_t seed = 1;
  for (bool ws : {false, true})
    for (bool xs : {false, true}) {
      Check({64, 16, 7, 7, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, ws, xs}, seed++);    // 49 pixels: a partial tile
      Check({70, 8, 9, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, ws, xs}, seed++);     // a 6-channel last panel
      Check({17, 4, 6, 11, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, ws, xs}, seed++);    // one short panel
      Check({130, 12, 5, 4, 1, 3, 1, 1, 1, 1, 0, 1, 0, 1, ws, xs}, seed++);   // three panels, 1x3
    }
}

TEST_F(Q8ConvNhwcTest, StridesDilationPadding) {
  uint32_t seed = 40;
  for (bool ws : {false, true})
    for (bool xs : {false, true}) {
      Check({32, 8, 13, 10, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, ws, xs}, seed++);   // stride 2
      Check({24, 12, 14, 14, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, ws, xs}, seed++);  // strided pointwise
      Check({9, 4, 11, 12, 3, 3, 1, 1, 2, 3, 2, 3, 2, 3, ws, xs}, seed++);    // dilation
      Check({20, 8, 9, 7, 2, 3, 1, 2, 1, 1, 0, 2, 1, 0, ws, xs}, seed++);     // asymmetric pads, strides differ
      Check({11, 4, 12, 12, 5, 5, 3, 3, 1, 1, 2, 2, 2, 2, ws, xs}, seed++);   // 5x5, stride 3
    }
}

TEST_F(Q8ConvNhwcTest, ScalesBiasRowStride) {
  Check({40, 8, 6, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false, false, false, true}, 70);        // one scale
  Check({40, 8, 6, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, false, true, false}, 71);         // no bias
  Check({40, 8, 6, 6, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, true, true, true, true, 24}, 72);      // ldc > M
}

// Results past int16 and past int32 (the top clamped in float, the bottom by saturation), and
// zero points at the ends of the type's range.
TEST_F(Q8ConvNhwcTest, SaturatesFarOutsideTheRange) {
  Case c{70, 8, 5, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, false};
  uint32_t seed = 90;
  for (double boost : {1e3, 1e9}) {
    c.scale_boost = boost;
    for (auto [zs, zu] : {std::pair{-128, 0}, std::pair{127, 255}, std::pair{-100, 200}}) {
      c.zp_signed = zs, c.zp_unsigned = zu;
      Check(c, seed++);
    }
  }
}

TEST_F(Q8ConvNhwcTest, ThreadsAndLargeWeights) {
  ThreadPool pool(2);
  Check({64, 64, 20, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false, false}, 80, &pool);   // small weights: by block
  Check({200, 160, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, false}, 81, &pool);  // 288 KB: by panel
  Check({200, 160, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false, true}, 82);
}

// What the direct kernel does not take stays unpacked, so the caller runs the GEMM instead.
TEST(Q8ConvNhwcPack, AsymmetricWeightsOrOddChannelsStayEmpty) {
  std::vector<uint8_t> w(8 * 6 * 9, 1);
  std::vector<int32_t> zero(8, 0), one(8, 0), u8_zero(8, 128);
  one[3] = 1;
  EXPECT_FALSE(PackedQ8Nhwc(8, 4, 3, 3, w.data(), true, zero.data(), true).empty());
  EXPECT_FALSE(PackedQ8Nhwc(8, 4, 3, 3, w.data(), false, u8_zero.data(), true).empty());
  EXPECT_TRUE(PackedQ8Nhwc(8, 4, 3, 3, w.data(), true, one.data(), true).empty());      // a zero point of 1
  EXPECT_TRUE(PackedQ8Nhwc(8, 4, 3, 3, w.data(), false, zero.data(), true).empty());    // uint8 W, zero point 0
  EXPECT_TRUE(PackedQ8Nhwc(8, 6, 3, 3, w.data(), true, zero.data(), true).empty());     // C = 6
  EXPECT_FALSE(PackedQ8Nhwc(8, 4, 3, 3, w.data(), true, nullptr, false).empty());  // no zero points: 0
}

}  // namespace
}  // namespace onyx::linalg
