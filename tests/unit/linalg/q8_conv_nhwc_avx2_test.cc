// The AVX2 channels-last int8 convolution (q8_conv_nhwc_avx2.h), forced as ONYX_LINALG_ISA=avx2
// forces it (the int8 chain's AVX2 kernel), against a scalar reference written here: the exact
// int32 window sums (padding reads the zero point), requantized as ONNX Runtime does (float clamp,
// round half to even, zero point). Codes near the ends of both types (where vpmaddubsw would
// saturate), kernels 1x1 to 5x5, strides, dilation, padding, partial 4-pixel tiles and 16-channel
// sub-panels, several panels, per-tensor / per-channel scales, results far outside the range,
// threads; a following lut and QLinearAdd (their codes from the plain ones); and Q8ConvNhwc and
// Q8ConvNhwcAvailable routing to it. Each for the vpmaddwd tile and the AVX-VNNI one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "linalg/q8_conv_nhwc.h"
#include "linalg/q8_conv_nhwc_avx2.h"
#include "linalg/q8_conv_nhwc_reference.h"
#include "linalg/q8_gemm.h"
#include "linalg/q8_quantize.h"
#include "platform/cpu_features.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {
namespace {

// Parameter: the AVX-VNNI tile (true) or the vpmaddwd one (false).
class Q8ConvNhwcAvx2Test : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    const auto isas = SupportedQ8Isas();
    if (std::find(isas.begin(), isas.end(), "avx2") == isas.end()) GTEST_SKIP() << "no AVX2";
    if (GetParam() && !GetCpuFeatures().avx_vnni) GTEST_SKIP() << "no AVX-VNNI";
    ASSERT_TRUE(ForceQ8Isa("avx2"));
    Q8ConvNhwcAvx2AllowVnni(GetParam());
    ASSERT_EQ(Q8ConvNhwcAvx2UsesVnni(), GetParam());
  }
  void TearDown() override {
    Q8ConvNhwcAvx2AllowVnni(true);
    ForceQ8Isa("auto");
  }
};

struct Case {
  int64_t m, c, ih, iw, kh, kw, sy, sx, dy, dx, top, left, bottom, right;
  bool w_signed, x_signed;
  bool per_channel = true;
  double scale_boost = 1.0;
  bool extreme = false;  // codes only at the ends of the types
};

struct Conv {
  Q8ConvNhwcShape s;
  std::vector<uint8_t> w, x;
  int32_t x_zp = 0;
  std::vector<int64_t> ref;  // exact sums, [pixel][m]
  std::vector<float> scale;
  std::vector<int32_t> bias;
};

Conv Make(const Case& p, uint32_t seed) {
  Conv v;
  auto& s = v.s;
  s.channels = p.c, s.ih = p.ih, s.iw = p.iw, s.kh = p.kh, s.kw = p.kw, s.sy = p.sy, s.sx = p.sx;
  s.dy = p.dy, s.dx = p.dx, s.top = p.top, s.left = p.left;
  s.oh = (p.ih + p.top + p.bottom - ((p.kh - 1) * p.dy + 1)) / p.sy + 1;
  s.ow = (p.iw + p.left + p.right - ((p.kw - 1) * p.dx + 1)) / p.sx + 1;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255), end(0, 3);
  auto code = [&](bool is_signed) {
    if (!p.extreme) return static_cast<uint8_t>(byte(rng));
    static const uint8_t kSignedEnds[] = {0x80, 0x81, 0x7F, 0x7E}, kUnsignedEnds[] = {0, 1, 255, 254};
    return (is_signed ? kSignedEnds : kUnsignedEnds)[end(rng)];
  };
  v.w.resize(static_cast<size_t>(p.m * p.c * p.kh * p.kw));
  v.x.resize(static_cast<size_t>(p.ih * p.iw * p.c));
  for (auto& b : v.w) b = code(p.w_signed);
  for (auto& b : v.x) b = code(p.x_signed);
  v.x_zp = p.x_signed ? -9 : 121;
  Q8ConvNhwcSums reference = ReferenceQ8ConvNhwcSums(s, p.m, v.w, p.w_signed, v.x, p.x_signed, v.x_zp);
  v.ref = std::move(reference.sums);
  const int64_t peak = reference.peak;
  for (int64_t i = 0; i < p.m; ++i) {
    v.scale.push_back(static_cast<float>((70.0 + 17.0 * static_cast<double>(i % 7)) / peak * p.scale_boost));
    v.bias.push_back(static_cast<int32_t>((i * 7907) % 3000) - 1500);
  }
  return v;
}

Q8Output Output(const Conv& v, const Case& p, bool out_signed, std::vector<uint8_t>& q) {
  Q8Output o;
  o.kind = Q8Output::kQuantized;
  o.c = q.data();
  o.ldc = p.m;
  o.scale = v.scale.data();
  o.scale_per_column = p.per_channel;
  o.bias_int = v.bias.data();
  o.zero_point = out_signed ? 3 : 125;
  o.out_signed = out_signed;
  return o;
}

void Check(const Case& p, uint32_t seed, ThreadPool* pool = nullptr) {
  const Conv v = Make(p, seed);
  const int64_t pixels = v.s.oh * v.s.ow;
  std::vector<int32_t> w_zp(static_cast<size_t>(p.m), p.w_signed ? 0 : 128);
  const PackedQ8Nhwc packed(p.m, p.c, p.kh, p.kw, v.w.data(), p.w_signed, w_zp.data(), true);
  ASSERT_FALSE(packed.empty());
  for (bool out_signed : {false, true}) {
    std::vector<uint8_t> q(static_cast<size_t>(pixels * p.m + 5), 0xA5);
    const Q8Output o = Output(v, p, out_signed, q);
    Q8ConvNhwcAvx2(packed, v.s, v.x.data(), p.x_signed, v.x_zp, o, pool, nullptr, nullptr);
    for (int64_t px = 0; px < pixels; ++px)
      for (int64_t ch = 0; ch < p.m; ++ch) {
        const float sc = v.scale[static_cast<size_t>(p.per_channel ? ch : 0)];
        const float f = static_cast<float>(static_cast<int32_t>(v.ref[static_cast<size_t>(px * p.m + ch)]) +
                                           v.bias[static_cast<size_t>(ch)]) * sc;
        const float lo = (out_signed ? -128.0f : 0.0f) - static_cast<float>(o.zero_point);
        const float hi = (out_signed ? 127.0f : 255.0f) - static_cast<float>(o.zero_point);
        const auto expect = static_cast<int32_t>(std::nearbyint(std::min(std::max(f, lo), hi))) + o.zero_point;
        const uint8_t have = q[static_cast<size_t>(px * p.m + ch)];
        ASSERT_EQ(out_signed ? static_cast<int8_t>(have) : have, expect) << "pixel " << px << " channel " << ch;
      }
    for (size_t i = static_cast<size_t>(pixels * p.m); i < q.size(); ++i) ASSERT_EQ(q[i], 0xA5) << "wrote past the output";
  }
}

TEST_P(Q8ConvNhwcAvx2Test, PointwiseAndThreeByThree) {
  uint32_t seed = 1;
  for (bool ws : {false, true})
    for (bool xs : {false, true}) {
      Check({64, 16, 7, 7, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, ws, xs}, seed++);   // 49 pixels: a partial tile
      Check({70, 8, 9, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, ws, xs}, seed++);    // a 6-channel last panel
      Check({17, 4, 6, 11, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, ws, xs}, seed++);   // 16 + 1 channels
      Check({130, 12, 5, 4, 1, 3, 1, 1, 1, 1, 0, 1, 0, 1, ws, xs}, seed++);  // three panels, 1x3
    }
}

TEST_P(Q8ConvNhwcAvx2Test, StridesDilationPaddingAndOneScale) {
  uint32_t seed = 40;
  for (bool ws : {false, true})
    for (bool xs : {false, true}) {
      Check({32, 8, 13, 10, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, ws, xs}, seed++);
      Check({24, 12, 14, 14, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, ws, xs}, seed++);
      Check({9, 4, 11, 12, 3, 3, 1, 1, 2, 3, 2, 3, 2, 3, ws, xs}, seed++);
      Check({11, 4, 12, 12, 5, 5, 3, 3, 1, 1, 2, 2, 2, 2, ws, xs}, seed++);
    }
  Check({40, 8, 6, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false, false, false}, 70);
}

// Every code at an end of its type: pair sums past int16 (255 * 127 * 2) must stay exact.
TEST_P(Q8ConvNhwcAvx2Test, CodesAtTheEndsOfTheTypes) {
  uint32_t seed = 80;
  for (bool ws : {false, true})
    for (bool xs : {false, true}) {
      Case c{48, 32, 6, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, ws, xs};
      c.extreme = true;
      Check(c, seed++);
    }
}

TEST_P(Q8ConvNhwcAvx2Test, SaturatesFarOutsideTheRangeAndThreads) {
  Case c{70, 8, 5, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, false};
  c.scale_boost = 1e9;
  Check(c, 90);
  ThreadPool pool(2);
  Check({100, 24, 17, 13, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, true}, 91, &pool);
  // Large weights (> 256 KB): panels outermost.
  Check({200, 160, 6, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, false}, 92, &pool);
}

// Q8ConvNhwc and the availability test route to the AVX2 tile under the AVX2 selection.
TEST_P(Q8ConvNhwcAvx2Test, RoutedFromQ8ConvNhwc) {
  ASSERT_TRUE(Q8ConvNhwcAvx2Selected());
  ASSERT_TRUE(Q8ConvNhwcAvailable());
  const Case p{20, 8, 6, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, false};
  const Conv v = Make(p, 95);
  const PackedQ8Nhwc packed(p.m, p.c, p.kh, p.kw, v.w.data(), true, nullptr, false);
  const int64_t n = v.s.oh * v.s.ow * p.m;
  std::vector<uint8_t> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
  Q8ConvNhwcAvx2(packed, v.s, v.x.data(), false, v.x_zp, Output(v, p, false, a), nullptr, nullptr, nullptr);
  Q8ConvNhwc(packed, v.s, v.x.data(), false, v.x_zp, Output(v, p, false, b), nullptr);
  EXPECT_EQ(a, b);
}

// A following lut and QLinearAdd: the stored codes are the lut's / Q8AddU8's (S8) of the plain ones.
TEST_P(Q8ConvNhwcAvx2Test, LutAndAddend) {
  const Case p{37, 12, 7, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, false};
  const Conv v = Make(p, 99);
  const PackedQ8Nhwc packed(p.m, p.c, p.kh, p.kw, v.w.data(), true, nullptr, false);
  const int64_t pixels = v.s.oh * v.s.ow, n = pixels * p.m;
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<uint8_t> lut(256), other(static_cast<size_t>(n));
  for (auto& b : lut) b = static_cast<uint8_t>(byte(rng));
  for (auto& b : other) b = static_cast<uint8_t>(byte(rng));
  for (bool out_signed : {false, true}) {
    std::vector<uint8_t> plain(static_cast<size_t>(n)), looked(plain.size()), added(plain.size());
    Q8ConvNhwcAvx2(packed, v.s, v.x.data(), false, v.x_zp, Output(v, p, out_signed, plain), nullptr, nullptr, nullptr);
    Q8ConvNhwcAvx2(packed, v.s, v.x.data(), false, v.x_zp, Output(v, p, out_signed, looked), nullptr, lut.data(),
                   nullptr);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(looked[static_cast<size_t>(i)], lut[plain[static_cast<size_t>(i)]]) << i;
    for (bool conv_is_a : {true, false}) {
      Q8ConvAddend add;
      add.other = other.data();
      add.ldo = p.m;
      add.ra = 0.7f, add.rb = 1.9f, add.fixed = out_signed ? -3.5f : 17.25f;
      add.conv_is_a = conv_is_a;
      Q8ConvNhwcAvx2(packed, v.s, v.x.data(), false, v.x_zp, Output(v, p, out_signed, added), nullptr, nullptr, &add);
      std::vector<uint8_t> want(plain.size());
      for (int64_t px = 0; px < pixels; ++px) {
        const uint8_t* y = plain.data() + px * p.m;
        const uint8_t* r = other.data() + px * p.m;
        const uint8_t* a = conv_is_a ? y : r;
        const uint8_t* b = conv_is_a ? r : y;
        if (out_signed)
          Q8AddS8(reinterpret_cast<const int8_t*>(a), add.ra, reinterpret_cast<const int8_t*>(b), 1, add.rb, add.fixed,
                  p.m, reinterpret_cast<int8_t*>(want.data() + px * p.m));
        else
          Q8AddU8(a, add.ra, b, 1, add.rb, add.fixed, p.m, want.data() + px * p.m);
      }
      ASSERT_EQ(added, want) << (out_signed ? "int8" : "uint8") << (conv_is_a ? " A" : " B");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Tiles, Q8ConvNhwcAvx2Test, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) { return info.param ? "AvxVnni" : "Madd"; });

}  // namespace
}  // namespace onyx::linalg
