// Q8Depthwise (2-D int8 depthwise convolution) for every ISA variant against a direct loop over
// the definition: odd sizes, strides 1-3, dilations, asymmetric padding, int8 and uint8 input
// with zero points, per-channel weights; the int32 result and the requantized int8/uint8 one
// (per-channel scale and bias, rounding half to even, saturation) against the formula applied
// here to the reference's int32 result.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "linalg/gemm.h"
#include "linalg/isa_variant_test.h"
#include "linalg/q8_dwconv.h"
#include "linalg/q8_dwconv_test_shape.h"

namespace onyx::linalg {
namespace {

class Q8DepthwiseVariant : public LinalgIsaVariant {};

struct Case {
  int64_t ih, iw, kh, kw, sy, sx, dy, dx, top, left, bottom, right;
  bool x_signed;
};

// The definition, one output at a time.
std::vector<int32_t> Reference(const Q8DepthwiseShape& s, int64_t channels, const std::vector<uint8_t>& x,
                               bool x_signed, int32_t x_zp, const std::vector<int32_t>& w) {
  std::vector<int32_t> out(static_cast<size_t>(channels * s.oh * s.ow));
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t y = 0; y < s.oh; ++y)
      for (int64_t xo = 0; xo < s.ow; ++xo) {
        int64_t sum = 0;
        for (int64_t i = 0; i < s.kh; ++i)
          for (int64_t j = 0; j < s.kw; ++j) {
            const int64_t yy = y * s.sy + i * s.dy - s.top, xx = xo * s.sx + j * s.dx - s.left;
            if (yy < 0 || yy >= s.ih || xx < 0 || xx >= s.iw) continue;
            const uint8_t b = x[static_cast<size_t>((c * s.ih + yy) * s.iw + xx)];
            const int32_t v = x_signed ? static_cast<int8_t>(b) : b;
            sum += static_cast<int64_t>(v - x_zp) * w[static_cast<size_t>((c * s.kh + i) * s.kw + j)];
          }
        out[static_cast<size_t>((c * s.oh + y) * s.ow + xo)] = static_cast<int32_t>(sum);
      }
  return out;
}

// int8_weights: weights minus their zero point within int8 (symmetric int8 weights: the AVX-512 VNNI
// path), else the whole 9-bit range (the 16-bit pair path).
void Check(const Case& k, uint32_t seed, bool int8_weights) {
  const Q8DepthwiseShape s = DepthwiseShapeOf(k);
  ASSERT_GT(s.oh, 0);
  ASSERT_GT(s.ow, 0);
  const int64_t channels = 5;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255), wv(int8_weights ? -128 : -255, int8_weights ? 127 : 255);
  std::vector<uint8_t> x(static_cast<size_t>(channels * s.ih * s.iw));
  for (auto& v : x) v = static_cast<uint8_t>(byte(rng));
  std::vector<int32_t> w(static_cast<size_t>(channels * s.kh * s.kw));
  for (auto& v : w) v = wv(rng);
  const int32_t x_zp = k.x_signed ? -3 : 131;
  const std::vector<int32_t> ref = Reference(s, channels, x, k.x_signed, x_zp, w);
  // Scratch of any contents: callers keep it between calls.
  std::vector<int32_t> scratch(static_cast<size_t>(Q8DepthwiseScratchSize(s)), 0x5A5A5A5A);

  std::vector<int32_t> got(ref.size(), -1);
  Q8Depthwise(s, channels, x.data(), k.x_signed, x_zp, w.data(), nullptr, got.data(), scratch.data());
  ASSERT_EQ(got, ref);

  // Requantized: a scale per channel that spreads the sums over the output range and past it.
  std::vector<float> scale(static_cast<size_t>(channels));
  std::vector<int32_t> bias(static_cast<size_t>(channels));
  int64_t peak = 1;
  for (int32_t v : ref) peak = std::max<int64_t>(peak, std::abs(static_cast<int64_t>(v)));
  for (int64_t c = 0; c < channels; ++c) {
    scale[static_cast<size_t>(c)] = static_cast<float>((100.0 + 60.0 * static_cast<double>(c)) / peak);
    bias[static_cast<size_t>(c)] = static_cast<int32_t>(c * 977) - 1500;
  }
  for (bool out_signed : {false, true}) {
    Q8DepthwiseRequant rq;
    rq.bias = bias.data(), rq.scale = scale.data(), rq.zero_point = out_signed ? 5 : 120, rq.out_signed = out_signed;
    std::vector<uint8_t> q(ref.size(), 0xAB);
    Q8Depthwise(s, channels, x.data(), k.x_signed, x_zp, w.data(), &rq, q.data(), scratch.data());
    const int64_t out_size = s.oh * s.ow;
    for (size_t i = 0; i < ref.size(); ++i) {
      const auto c = static_cast<size_t>(static_cast<int64_t>(i) / out_size);
      const float f = static_cast<float>(ref[i] + bias[c]) * scale[c];
      const float r = std::nearbyint(f) + static_cast<float>(rq.zero_point);
      const float lo = out_signed ? -128.0f : 0.0f, hi = out_signed ? 127.0f : 255.0f;
      const auto expect = static_cast<int32_t>(std::min(std::max(r, lo), hi));
      const int32_t have = out_signed ? static_cast<int8_t>(q[i]) : q[i];
      ASSERT_EQ(have, expect) << "at " << i << " (channel " << c << "), out_signed " << out_signed;
    }
  }
}

void Check(const Case& k, uint32_t seed) {
  for (bool int8_weights : {false, true}) {
    SCOPED_TRACE(int8_weights ? "int8 weights" : "9-bit weights");
    Check(k, seed, int8_weights);
  }
}

TEST_P(Q8DepthwiseVariant, Stride1Padded3x3) {
  Check({7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false}, 1);
  Check({13, 29, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true}, 2);
  Check({1, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false}, 3);
}

TEST_P(Q8DepthwiseVariant, Stride2AsymmetricPadding) {
  Check({14, 14, 3, 3, 2, 2, 1, 1, 0, 0, 1, 1, false}, 4);  // TF-style SAME at stride 2
  Check({15, 17, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, true}, 5);
  Check({112, 112, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, false}, 6);
}

TEST_P(Q8DepthwiseVariant, OddKernelsStridesAndDilations) {
  Check({11, 9, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, false}, 7);
  Check({12, 19, 5, 2, 3, 2, 1, 2, 1, 0, 2, 3, true}, 8);
  Check({10, 10, 3, 3, 1, 3, 2, 1, 2, 0, 2, 0, false}, 9);
  Check({9, 8, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, true}, 10);
  Check({9, 8, 1, 1, 2, 3, 1, 1, 0, 0, 0, 0, false}, 11);
  Check({6, 40, 1, 7, 1, 1, 1, 1, 0, 3, 0, 3, true}, 12);
}

// MobileNetV2's depthwise layers (3x3, pad 1, strides 1 and 2, planes 112 down to 7) and their
// neighbours: rows wider than a vector, rows sharing one (7, 5, 3 wide), odd sizes, one-sided
// padding, both signednesses.
TEST_P(Q8DepthwiseVariant, MobileNetShapes) {
  uint32_t seed = 100;
  for (int64_t size : {112, 56, 28, 14, 7, 17, 9, 5, 3, 2})
    for (int64_t stride : {1, 2})
      for (bool x_signed : {false, true}) {
        Check({size, size, 3, 3, stride, stride, 1, 1, 1, 1, 1, 1, x_signed}, seed++);
        Check({size, size + 3, 3, 3, stride, stride, 1, 1, 0, 1, 1, 0, x_signed}, seed++);
      }
  Check({16, 33, 3, 4, 1, 1, 1, 1, 1, 2, 1, 1, false}, seed++);  // 4-wide rows: the whole quad
  Check({20, 21, 2, 2, 2, 1, 2, 2, 0, 0, 1, 1, true}, seed++);   // dilated
  Check({6, 40, 4, 3, 1, 4, 1, 1, 2, 1, 1, 1, false}, seed++);   // stride 4
}

// Vectors of several whole output rows (ow <= 8) four at a time: passes that share input rows
// (stride 1, 2 rows a vector) or not (stride 2; 4 rows a vector), a last vector of fewer rows,
// and the rows left after the passes.
TEST_P(Q8DepthwiseVariant, SmallPlanesFourVectorsAPass) {
  uint32_t seed = 300;
  for (bool x_signed : {false, true}) {
    Check({20, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, x_signed}, seed++);  // 8-wide rows: 2 a vector
    Check({15, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, x_signed}, seed++);  // 7-wide rows: last vector 1 row
    Check({16, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, x_signed}, seed++);  // 4 rows a vector
    Check({29, 13, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, x_signed}, seed++); // 7-wide rows at stride 2
    Check({13, 9, 3, 3, 1, 2, 1, 1, 1, 1, 1, 1, x_signed}, seed++);  // stride 1 down, 2 across
  }
}

// One output position per dimension reads one window whatever the stride: the plane's stride
// phases must not grow with it.
TEST_P(Q8DepthwiseVariant, HugeStridesWithOneOutputPosition) {
  constexpr int64_t kHuge = INT64_MAX;
  Check({5, 6, 3, 3, kHuge, kHuge, 1, 1, 1, 0, 0, 0, false}, 13);
  Check({4, 9, 3, 3, kHuge, 2, 1, 1, 0, 1, 0, 1, true}, 14);
  EXPECT_LT(Q8DepthwiseScratchSize(DepthwiseShapeOf(Case{5, 6, 3, 3, kHuge, kHuge, 1, 1, 1, 0, 0, 0, false})), 1000);
}

INSTANTIATE_TEST_SUITE_P(AllIsas, Q8DepthwiseVariant, ::testing::Values("avx512", "avx2", "scalar"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace onyx::linalg
