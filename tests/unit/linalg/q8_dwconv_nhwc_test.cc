// Q8DepthwiseNhwc (channels-last int8 depthwise convolution) on every int8 ISA (the AVX-512 VNNI
// kernel where it runs, the scalar reference elsewhere) against Q8DepthwiseNhwcReference, and the
// reference against the NCHW Q8Depthwise (an independent kernel) on the transposed image: odd
// sizes, strides, dilations, asymmetric padding, channel counts around the kernel's 64-channel
// step, kernels of more than 4 rows, int8 / uint8 input and output, with and without bias, 1 and
// 2 threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "linalg/q8_dwconv.h"
#include "linalg/q8_dwconv_nhwc.h"
#include "linalg/q8_dwconv_test_shape.h"
#include "linalg/q8_isa_test.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {
namespace {

struct Case {
  int64_t batch, channels, ih, iw, kh, kw, sy, sx, dy, dx, top, left, bottom, right;
  bool x_signed, out_signed, bias;
};

const Case kCases[] = {
    {1, 144, 9, 11, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false, false, true},   // MobileNetV2's block, 2.25 steps
    {2, 96, 12, 10, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, false, false, true},   // stride 2, batch 2
    {1, 64, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, true, true},       // int8 in and out
    {1, 960, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false, false, true},    // 15 steps, mostly padding
    {1, 5, 8, 9, 5, 5, 1, 2, 1, 1, 2, 1, 2, 3, false, true, false},      // 5 rows: two row groups
    {1, 70, 13, 6, 7, 1, 1, 1, 1, 1, 3, 0, 3, 0, true, false, true},     // 7x1
    {1, 33, 9, 9, 3, 2, 2, 3, 2, 2, 0, 2, 1, 0, true, true, false},      // dilation, odd stride, asymmetric pads
    {1, 17, 1, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false, false, true},     // one pixel, all padding but the centre
};

struct Data {
  std::vector<uint8_t> x, w;
  std::vector<int32_t> zero_points, bias;
  std::vector<float> scale;
  int32_t x_zp = 0, y_zp = 0;
};

Data MakeData(const Case& c, uint32_t seed) {
  std::mt19937 rng(seed);
  Data d;
  d.x.resize(static_cast<size_t>(c.batch * c.ih * c.iw * c.channels));
  for (auto& v : d.x) v = static_cast<uint8_t>(rng());
  d.x_zp = c.x_signed ? static_cast<int32_t>(rng() % 256) - 128 : static_cast<int32_t>(rng() % 256);
  d.y_zp = c.out_signed ? static_cast<int32_t>(rng() % 41) - 20 : static_cast<int32_t>(rng() % 41) + 100;
  // uint8 weights with per-channel zero points, each w - zero point within int8.
  d.w.resize(static_cast<size_t>(c.channels * c.kh * c.kw));
  d.zero_points.resize(static_cast<size_t>(c.channels));
  for (int64_t ch = 0; ch < c.channels; ++ch) {
    const int32_t z = 100 + static_cast<int32_t>(rng() % 56);
    d.zero_points[static_cast<size_t>(ch)] = z;
    const int32_t lo = std::max(-128, -z), hi = std::min(127, 255 - z);  // codes in [0, 255]
    for (int64_t t = 0; t < c.kh * c.kw; ++t)
      d.w[static_cast<size_t>(ch * c.kh * c.kw + t)] =
          static_cast<uint8_t>(z + lo + static_cast<int32_t>(rng() % static_cast<uint32_t>(hi - lo + 1)));
  }
  d.bias.resize(static_cast<size_t>(c.channels));
  d.scale.resize(static_cast<size_t>(c.channels));
  for (auto& b : d.bias) b = static_cast<int32_t>(rng() % 20001) - 10000;
  // Scales that put the sums across the whole output range, saturation included.
  for (auto& s : d.scale) s = (0.5f + static_cast<float>(rng() % 1000) / 1000.0f) / (60.0f * static_cast<float>(c.kh * c.kw));
  return d;
}

Q8DepthwiseRequant RequantOf(const Case& c, const Data& d) {
  Q8DepthwiseRequant rq;
  rq.bias = c.bias ? d.bias.data() : nullptr;
  rq.scale = d.scale.data();
  rq.zero_point = d.y_zp;
  rq.out_signed = c.out_signed;
  return rq;
}

class Q8DepthwiseNhwcVariant : public ForcedQ8IsaTest {};

TEST_P(Q8DepthwiseNhwcVariant, EqualsTheReference) {
  ThreadPool pool(2);
  for (const Case& c : kCases)
    for (uint32_t seed = 1; seed <= 3; ++seed) {
      SCOPED_TRACE("channels " + std::to_string(c.channels) + ", " + std::to_string(c.kh) + "x" +
                   std::to_string(c.kw) + ", seed " + std::to_string(seed));
      const Data d = MakeData(c, seed);
      const Q8DepthwiseShape s = DepthwiseShapeOf(c);
      const PackedQ8DepthwiseNhwc w(c.channels, c.kh, c.kw, d.w.data(), false, d.zero_points.data(), true);
      ASSERT_FALSE(w.empty());
      const Q8DepthwiseRequant rq = RequantOf(c, d);
      const auto size = static_cast<size_t>(c.batch * s.oh * s.ow * c.channels);
      std::vector<uint8_t> expected(size), one(size, 0xAB), two(size, 0xCD);
      Q8DepthwiseNhwcReference(w, s, c.batch, d.x.data(), c.x_signed, d.x_zp, rq, expected.data());
      Q8DepthwiseNhwc(w, s, c.batch, d.x.data(), c.x_signed, d.x_zp, rq, one.data(), nullptr);
      Q8DepthwiseNhwc(w, s, c.batch, d.x.data(), c.x_signed, d.x_zp, rq, two.data(), &pool);
      EXPECT_EQ(one, expected);
      EXPECT_EQ(two, expected);
    }
}

INSTANTIATE_TEST_SUITE_P(AllIsas, Q8DepthwiseNhwcVariant, ::testing::Values("amx", "avx512vnni", "avx2", "scalar"),
                         [](const auto& info) { return info.param; });

// The reference against the NCHW kernel (weights minus their zero points, the same requantization).
TEST(Q8DepthwiseNhwcReference, EqualsTheNchwKernel) {
  for (const Case& c : kCases) {
    SCOPED_TRACE("channels " + std::to_string(c.channels) + ", " + std::to_string(c.kh) + "x" + std::to_string(c.kw));
    const Data d = MakeData(c, 7);
    const Q8DepthwiseShape s = DepthwiseShapeOf(c);
    const PackedQ8DepthwiseNhwc w(c.channels, c.kh, c.kw, d.w.data(), false, d.zero_points.data(), true);
    const Q8DepthwiseRequant rq = RequantOf(c, d);
    const int64_t in_pixels = c.ih * c.iw, out_pixels = s.oh * s.ow;
    std::vector<uint8_t> nhwc(static_cast<size_t>(c.batch * out_pixels * c.channels));
    Q8DepthwiseNhwcReference(w, s, c.batch, d.x.data(), c.x_signed, d.x_zp, rq, nhwc.data());
    std::vector<int32_t> wc(d.w.size());
    for (size_t i = 0; i < wc.size(); ++i)
      wc[i] = static_cast<int32_t>(d.w[i]) - d.zero_points[i / static_cast<size_t>(c.kh * c.kw)];
    std::vector<int32_t> scratch(static_cast<size_t>(Q8DepthwiseScratchSize(s)));
    for (int64_t n = 0; n < c.batch; ++n) {
      std::vector<uint8_t> xc(static_cast<size_t>(c.channels * in_pixels)), yc(static_cast<size_t>(c.channels * out_pixels));
      for (int64_t p = 0; p < in_pixels; ++p)
        for (int64_t ch = 0; ch < c.channels; ++ch)
          xc[static_cast<size_t>(ch * in_pixels + p)] = d.x[static_cast<size_t>((n * in_pixels + p) * c.channels + ch)];
      Q8Depthwise(s, c.channels, xc.data(), c.x_signed, d.x_zp, wc.data(), &rq, yc.data(), scratch.data());
      for (int64_t p = 0; p < out_pixels; ++p)
        for (int64_t ch = 0; ch < c.channels; ++ch)
          ASSERT_EQ(nhwc[static_cast<size_t>((n * out_pixels + p) * c.channels + ch)], yc[static_cast<size_t>(ch * out_pixels + p)])
              << "image " << n << ", pixel " << p << ", channel " << ch;
    }
  }
}

TEST(Q8DepthwiseNhwcPack, WeightsOutsideInt8LeaveItEmpty) {
  const uint8_t w[9] = {0, 1, 2, 3, 4, 5, 6, 7, 255};  // 255 - 0 does not fit int8
  const int32_t zp = 0;
  EXPECT_TRUE(PackedQ8DepthwiseNhwc(1, 3, 3, w, false, &zp, false).empty());
  const int32_t shifted = 128;
  EXPECT_FALSE(PackedQ8DepthwiseNhwc(1, 3, 3, w, false, &shifted, false).empty());
}

}  // namespace
}  // namespace onyx::linalg
