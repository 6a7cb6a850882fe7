// NCHWc pooling and channel scaling (every ISA variant, blocks 8 and 16) against plain NCHW
// loops written here: odd sizes, channels not a multiple of the block, padding, strides,
// dilations, ceil_mode-sized outputs, count_include_pad, windows with no tap inside the input.
#include "linalg/pool_nchwc.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

#include "linalg/conv.h"
#include "linalg/conv_test_util.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {
namespace {

using testing::ForEachIsa;

int64_t Blocks(int64_t c, int64_t block) { return (c + block - 1) / block; }

// [N, C, P] -> [N, ceil(C / B), P, B], padded channels zero.
std::vector<float> Block(const std::vector<float>& x, int64_t n, int64_t c, int64_t pixels, int64_t block) {
  std::vector<float> y(static_cast<size_t>(n * Blocks(c, block) * pixels * block), 0.0f);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < pixels; ++p)
        y[((i * Blocks(c, block) + ch / block) * pixels + p) * block + ch % block] = x[(i * c + ch) * pixels + p];
  return y;
}

int64_t OutSize(int64_t in, int64_t k, int64_t stride, int64_t dil, int64_t pb, int64_t pe, bool ceil_mode) {
  const int64_t span = in + pb + pe - dil * (k - 1) - 1;
  if (span < 0) return 0;
  int64_t out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pb) --out;  // the last window starts inside
  return out;
}

// The plain pooling of one NCHW image set, over every channel of `x` ([N, C, H, W]).
std::vector<float> PoolReference(NchwcPoolKind kind, const NchwcPool2dShape& s, int64_t c, const std::vector<float>& x) {
  std::vector<float> y(static_cast<size_t>(s.batch * c * s.out_h * s.out_w));
  for (int64_t plane = 0; plane < s.batch * c; ++plane)
    for (int64_t oh = 0; oh < s.out_h; ++oh)
      for (int64_t ow = 0; ow < s.out_w; ++ow) {
        double sum = 0.0;
        float max = std::numeric_limits<float>::lowest();
        int64_t inside = 0, padded = 0;
        for (int64_t kh = 0; kh < s.kernel_h; ++kh)
          for (int64_t kw = 0; kw < s.kernel_w; ++kw) {
            const int64_t ih = oh * s.stride_h - s.pad_top + kh * s.dilation_h;
            const int64_t iw = ow * s.stride_w - s.pad_left + kw * s.dilation_w;
            if (ih < s.in_h + s.pad_bottom && iw < s.in_w + s.pad_right) ++padded;
            if (ih < 0 || iw < 0 || ih >= s.in_h || iw >= s.in_w) continue;
            const float v = x[(plane * s.in_h + ih) * s.in_w + iw];
            ++inside;
            sum += v;
            if (v > max) max = v;
          }
        const int64_t count = kind == NchwcPoolKind::kAverageIncludePadding ? padded : inside;
        float& out = y[(plane * s.out_h + oh) * s.out_w + ow];
        if (kind == NchwcPoolKind::kMax) out = max;
        else out = count > 0 ? static_cast<float>(sum / count) : std::numeric_limits<float>::quiet_NaN();
      }
  return y;
}

void ExpectSame(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      ASSERT_TRUE(std::isnan(got[i])) << what << " at " << i;
      continue;
    }
    ASSERT_NEAR(got[i], want[i], 1e-5f * (1.0f + std::fabs(want[i]))) << what << " at " << i;
  }
}

std::string Describe(const NchwcPool2dShape& s, int block, NchwcPoolKind kind) {
  std::ostringstream o;
  o << "kind " << static_cast<int>(kind) << " block " << block << " n" << s.batch << " c" << s.channels << " "
    << s.in_h << "x" << s.in_w << " k" << s.kernel_h << "x" << s.kernel_w << " s" << s.stride_h << "," << s.stride_w
    << " d" << s.dilation_h << "," << s.dilation_w << " p" << s.pad_top << "," << s.pad_left << "," << s.pad_bottom
    << "," << s.pad_right << " -> " << s.out_h << "x" << s.out_w;
  return o.str();
}

// Pools random data both ways; the reference runs over the padded channels too (zeros), so the
// blocked result must match it lane for lane, padded lanes included.
void CheckPool(NchwcPoolKind kind, NchwcPool2dShape s, int block, std::mt19937& rng, ThreadPool* pool) {
  const std::string what = Describe(s, block, kind);
  const int64_t cb = Blocks(s.channels, block), padded_c = cb * block;
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> x(static_cast<size_t>(s.batch * padded_c * s.in_h * s.in_w), 0.0f);
  for (int64_t i = 0; i < s.batch; ++i)
    for (int64_t v = 0; v < s.channels * s.in_h * s.in_w; ++v) x[i * padded_c * s.in_h * s.in_w + v] = dist(rng);
  const std::vector<float> want =
      Block(PoolReference(kind, s, padded_c, x), s.batch, padded_c, s.out_h * s.out_w, block);
  const std::vector<float> xb = Block(x, s.batch, padded_c, s.in_h * s.in_w, block);
  std::vector<float> got(want.size(), 123.0f);
  NchwcPool2d(kind, s, block, xb.data(), got.data(), pool);
  ExpectSame(got, want, what);
}

NchwcPool2dShape Window(int64_t n, int64_t c, int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t stride,
                        int64_t pad, int64_t dil = 1, bool ceil_mode = false, int64_t pad_end = -1) {
  NchwcPool2dShape s;
  s.batch = n, s.channels = c, s.in_h = h, s.in_w = w, s.kernel_h = kh, s.kernel_w = kw;
  s.stride_h = s.stride_w = stride, s.dilation_h = s.dilation_w = dil;
  s.pad_top = s.pad_left = pad;
  s.pad_bottom = s.pad_right = pad_end < 0 ? pad : pad_end;
  s.out_h = OutSize(h, kh, stride, dil, s.pad_top, s.pad_bottom, ceil_mode);
  s.out_w = OutSize(w, kw, stride, dil, s.pad_left, s.pad_right, ceil_mode);
  return s;
}

const NchwcPoolKind kKinds[] = {NchwcPoolKind::kMax, NchwcPoolKind::kAverage, NchwcPoolKind::kAverageIncludePadding};

TEST(PoolNchwc, CommonWindows) {
  std::mt19937 rng(3);
  ThreadPool threads(2);
  ForEachIsa([&](const std::string& isa) {
    for (int block : {8, 16}) {
      if (block == ConvBlockSize()) {
        EXPECT_EQ(NchwcPoolIsa(block), isa);
      }
      for (NchwcPoolKind kind : kKinds)
        for (const NchwcPool2dShape& s :
             {Window(1, 64, 112, 112, 3, 3, 2, 1),             // ResNet's stem pool
              Window(1, 16, 13, 13, 5, 5, 1, 2),               // YOLO's SPPF
              Window(2, 13, 9, 11, 3, 3, 2, 1, 1, true),       // ceil_mode, channels past the block
              Window(1, 3, 7, 7, 2, 2, 2, 0, 1, true),         // ceil_mode, a last window over the edge
              Window(1, 17, 8, 6, 3, 2, 1, 0),                 // no padding, a 3x2 kernel
              Window(1, 5, 1, 9, 1, 3, 1, 1),                  // 1-pixel rows
              Window(1, 9, 1, 1, 3, 3, 1, 1),                  // one pixel, all padding around
              Window(1, 24, 10, 9, 3, 3, 1, 2, 2),             // dilation 2
              Window(1, 35, 11, 12, 4, 4, 3, 1, 1, true, 2),   // asymmetric pads, stride 3
              Window(1, 8, 2, 2, 2, 2, 1, 1, 3)})              // windows with no tap inside
          CheckPool(kind, s, block, rng, nullptr);
      CheckPool(NchwcPoolKind::kMax, Window(2, 40, 15, 17, 3, 3, 2, 1), block, rng, &threads);
    }
  });
}

TEST(PoolNchwc, RandomWindows) {
  std::mt19937 rng(11);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  ForEachIsa([&](const std::string&) {
    for (int block : {8, 16})
      for (int trial = 0; trial < 60; ++trial) {
        NchwcPool2dShape s;
        s.batch = pick(1, 2), s.channels = pick(1, 40), s.in_h = pick(1, 14), s.in_w = pick(1, 14);
        s.kernel_h = pick(1, 4), s.kernel_w = pick(1, 4), s.stride_h = pick(1, 3), s.stride_w = pick(1, 3);
        s.dilation_h = pick(1, 2), s.dilation_w = pick(1, 2);
        s.pad_top = pick(0, s.kernel_h - 1), s.pad_left = pick(0, s.kernel_w - 1);
        s.pad_bottom = pick(0, s.kernel_h - 1), s.pad_right = pick(0, s.kernel_w - 1);
        const bool ceil_mode = pick(0, 1) == 1;
        s.out_h = OutSize(s.in_h, s.kernel_h, s.stride_h, s.dilation_h, s.pad_top, s.pad_bottom, ceil_mode);
        s.out_w = OutSize(s.in_w, s.kernel_w, s.stride_w, s.dilation_w, s.pad_left, s.pad_right, ceil_mode);
        if (s.out_h <= 0 || s.out_w <= 0) continue;
        CheckPool(kKinds[trial % 3], s, block, rng, nullptr);
      }
  });
}

TEST(PoolNchwc, GlobalPools) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
  ThreadPool threads(2);
  ForEachIsa([&](const std::string&) {
    for (int block : {8, 16})
      for (auto [n, c, pixels] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {1, 13, 7}, {2, 40, 49},
                                  {1, 16, 3}, {1, 96, 12544}, {3, 24, 5}}) {
        const int64_t padded_c = Blocks(c, block) * block;
        std::vector<float> x(static_cast<size_t>(n * padded_c * pixels), 0.0f);
        for (int64_t i = 0; i < n; ++i)
          for (int64_t v = 0; v < c * pixels; ++v) x[i * padded_c * pixels + v] = dist(rng);
        std::vector<float> mean(static_cast<size_t>(n * padded_c)), max(mean.size());
        for (int64_t p = 0; p < n * padded_c; ++p) {
          double sum = 0.0;
          float m = std::numeric_limits<float>::lowest();
          for (int64_t i = 0; i < pixels; ++i) {
            sum += x[p * pixels + i];
            m = std::max(m, x[p * pixels + i]);
          }
          mean[p] = static_cast<float>(sum / pixels);
          max[p] = m;
        }
        const std::vector<float> xb = Block(x, n, padded_c, pixels, block);
        std::vector<float> got(mean.size(), 123.0f);
        const std::string what = "block " + std::to_string(block) + " n" + std::to_string(n) + " c" +
                                 std::to_string(c) + " pixels " + std::to_string(pixels);
        NchwcGlobalPool(false, n, c, pixels, block, xb.data(), got.data(), &threads);
        ExpectSame(got, Block(mean, n, padded_c, 1, block), "average " + what);
        NchwcGlobalPool(true, n, c, pixels, block, xb.data(), got.data(), nullptr);
        ExpectSame(got, Block(max, n, padded_c, 1, block), "max " + what);
      }
  });
}

TEST(PoolNchwc, ScaleChannels) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
  ThreadPool threads(2);
  ForEachIsa([&](const std::string&) {
    for (int block : {8, 16})
      for (auto [n, c, pixels] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {1, 13, 7}, {2, 40, 49},
                                  {1, 96, 3136}, {3, 24, 5}}) {
        std::vector<float> x(static_cast<size_t>(n * c * pixels)), scale(static_cast<size_t>(n * c));
        for (float& v : x) v = dist(rng);
        for (float& v : scale) v = dist(rng);
        std::vector<float> want(x.size());
        for (int64_t p = 0; p < n * c; ++p)
          for (int64_t i = 0; i < pixels; ++i) want[p * pixels + i] = x[p * pixels + i] * scale[p];
        const std::vector<float> xb = Block(x, n, c, pixels, block), sb = Block(scale, n, c, 1, block);
        std::vector<float> got(xb.size(), 123.0f);
        const std::string what = "block " + std::to_string(block) + " n" + std::to_string(n) + " c" +
                                 std::to_string(c) + " pixels " + std::to_string(pixels);
        NchwcScaleChannels(n, c, pixels, block, xb.data(), sb.data(), got.data(), &threads);
        ExpectSame(got, Block(want, n, c, pixels, block), what);  // padded lanes: 0 * 0
        NchwcScaleChannels(n, c, pixels, block, xb.data(), sb.data(), const_cast<float*>(xb.data()), nullptr);
        ExpectSame(xb, got, "in place " + what);
      }
  });
}

}  // namespace
}  // namespace onyx::linalg
