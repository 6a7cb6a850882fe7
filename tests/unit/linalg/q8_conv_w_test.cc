// Q8ConvW (the implicit-im2col NCHW int8 convolution on the weight-stationary GEMM) against an
// explicit im2col run through Q8GemmReference: strides 1, 2 (the vector gathers) and 3 (the lane
// by lane one), dilation, asymmetric padding, output rows shorter and longer than the 32-pixel
// panel, K not a multiple of 4, int8 and uint8 images and weights, threads; int32 and requantized
// outputs. Runs where the CPU has AVX-512 VNNI.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "linalg/q8_conv_w.h"
#include "linalg/q8_gemm.h"
#include "linalg/isa_variant_test.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {
namespace {

class Q8ConvWTest : public Q8VnniTest {};

struct Case {
  int64_t m, c, ih, iw, kh, kw, sy, sx, dy, dx, top, left, bottom, right;
  bool w_signed, x_signed;
  bool symmetric = false;  // W's zero points all 0 (int8 weights: the driver skips the pixel sums)
};

void Check(const Case& p, uint32_t seed, ThreadPool* pool = nullptr) {
  Q8ConvShape s;
  s.channels = p.c, s.ih = p.ih, s.iw = p.iw, s.kh = p.kh, s.kw = p.kw, s.sy = p.sy, s.sx = p.sx;
  s.dy = p.dy, s.dx = p.dx, s.top = p.top, s.left = p.left;
  s.oh = (p.ih + p.top + p.bottom - ((p.kh - 1) * p.dy + 1)) / p.sy + 1;
  s.ow = (p.iw + p.left + p.right - ((p.kw - 1) * p.dx + 1)) / p.sx + 1;
  const int64_t k = p.c * p.kh * p.kw, n = s.oh * s.ow;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<uint8_t> w(static_cast<size_t>(p.m * k)), x(static_cast<size_t>(p.c * p.ih * p.iw));
  for (auto& v : w) v = static_cast<uint8_t>(byte(rng));
  for (auto& v : x) v = static_cast<uint8_t>(byte(rng));
  std::vector<int32_t> w_zp(static_cast<size_t>(p.m));
  for (auto& z : w_zp) z = p.symmetric ? 0 : p.w_signed ? byte(rng) - 128 : byte(rng);
  const int32_t x_zp = p.x_signed ? -9 : 121;
  // The explicit im2col [K, N], the zero point's code in the padding.
  std::vector<uint8_t> col(static_cast<size_t>(k * n));
  for (int64_t r = 0; r < k; ++r) {
    const int64_t ch = r / (p.kh * p.kw), i = r / p.kw % p.kh, j = r % p.kw;
    for (int64_t q = 0; q < n; ++q) {
      const int64_t y = q / s.ow * p.sy - p.top + i * p.dy, xx = q % s.ow * p.sx - p.left + j * p.dx;
      const bool inside = y >= 0 && y < p.ih && xx >= 0 && xx < p.iw;
      col[static_cast<size_t>(r * n + q)] =
          inside ? x[static_cast<size_t>((ch * p.ih + y) * p.iw + xx)] : static_cast<uint8_t>(x_zp);
    }
  }
  std::vector<int32_t> ref(static_cast<size_t>(p.m * n));
  Q8GemmReference(p.m, n, k, w.data(), p.w_signed, k, w_zp.data(), true, false, col.data(), p.x_signed, n, &x_zp,
                  false, ref.data(), n);
  const PackedQ8W packed(p.m, k, w.data(), p.w_signed, w_zp.data(), true);

  std::vector<int32_t> c(static_cast<size_t>(p.m * n + 7), -1);
  Q8Output out;
  out.c = c.data();
  out.ldc = n;
  Q8ConvW(packed, s, x.data(), p.x_signed, x_zp, out, pool);
  for (int64_t i = 0; i < p.m * n; ++i) ASSERT_EQ(c[static_cast<size_t>(i)], ref[static_cast<size_t>(i)]) << "at " << i;
  for (size_t i = static_cast<size_t>(p.m * n); i < c.size(); ++i) ASSERT_EQ(c[i], -1) << "wrote past the output";

  std::vector<float> scale(static_cast<size_t>(p.m));
  std::vector<int32_t> bias(static_cast<size_t>(p.m));
  int64_t peak = 1;
  for (int32_t v : ref) peak = std::max<int64_t>(peak, std::abs(static_cast<int64_t>(v)));
  for (int64_t i = 0; i < p.m; ++i) {
    scale[static_cast<size_t>(i)] = static_cast<float>((70.0 + 17.0 * static_cast<double>(i % 7)) / peak);
    bias[static_cast<size_t>(i)] = static_cast<int32_t>((i * 7907) % 3000) - 1500;
  }
  for (bool out_signed : {false, true}) {
    std::vector<uint8_t> q(static_cast<size_t>(p.m * n));
    Q8Output o;
    o.kind = Q8Output::kQuantized;
    o.c = q.data();
    o.ldc = n;
    o.scale = scale.data();
    o.scale_per_column = true;
    o.bias_int = bias.data();
    o.zero_point = out_signed ? 3 : 125;
    o.out_signed = out_signed;
    Q8ConvW(packed, s, x.data(), p.x_signed, x_zp, o, pool);
    for (int64_t i = 0; i < p.m * n; ++i) {
      const auto row = static_cast<size_t>(i / n);
      const float f = static_cast<float>(ref[static_cast<size_t>(i)] + bias[row]) * scale[row];
      const float lo = out_signed ? -128.0f : 0.0f, hi = out_signed ? 127.0f : 255.0f;
      const auto expect =
          static_cast<int32_t>(std::min(std::max(std::nearbyint(f) + static_cast<float>(o.zero_point), lo), hi));
      const uint8_t have = q[static_cast<size_t>(i)];
      ASSERT_EQ(out_signed ? static_cast<int8_t>(have) : have, expect) << "at " << i;
    }
  }
}

TEST_F(Q8ConvWTest, StrideOneThreeByThree) {
  uint32_t seed = 1;
  for (bool ws : {false, true})
    for (bool xs : {false, true}) {
      Check({8, 5, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, ws, xs}, seed++);      // rows shorter than a panel
      Check({13, 3, 9, 45, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, ws, xs}, seed++);    // rows longer than a panel
      Check({9, 2, 6, 5, 2, 3, 1, 1, 1, 1, 0, 2, 1, 0, ws, xs}, seed++);      // asymmetric pads, K = 12
      Check({4, 3, 11, 12, 3, 3, 1, 1, 2, 3, 2, 3, 2, 3, ws, xs}, seed++);    // dilation
    }
}

TEST_F(Q8ConvWTest, StridesTwoAndThree) {
  uint32_t seed = 50;
  for (bool ws : {false, true})
    for (bool xs : {false, true}) {
      Check({16, 3, 23, 23, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3, ws, xs}, seed++);  // the ResNet stem, scaled down
      Check({7, 6, 14, 70, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, ws, xs}, seed++);   // strided pointwise
      Check({5, 4, 13, 10, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, ws, xs}, seed++);
      Check({6, 2, 17, 19, 3, 2, 3, 3, 1, 2, 1, 0, 2, 1, ws, xs}, seed++);   // stride 3: lane by lane
      Check({5, 3, 9, 40, 3, 3, 1, 2, 1, 1, 1, 1, 1, 1, ws, xs}, seed++);    // strides differ
    }
}

TEST_F(Q8ConvWTest, ManyChannelsAndThreads) {
  ThreadPool pool(2);
  Check({40, 37, 10, 10, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false, false}, 90, &pool);
  Check({24, 64, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, false}, 91, &pool);
  Check({17, 5, 30, 30, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2, false, true}, 92, &pool);
}

// A 1-D convolution, as QLinearConv runs it: one image row.
TEST_F(Q8ConvWTest, OneRow) {
  Check({10, 6, 1, 31, 1, 5, 1, 1, 1, 1, 0, 2, 0, 2, true, false}, 95);
  Check({7, 3, 1, 70, 1, 3, 1, 2, 1, 2, 0, 1, 0, 0, false, true}, 96);
}

// The last stage of a ResNet, scaled: W past L2, one or two pixel panels.
TEST_F(Q8ConvWTest, LargeWeightsSmallImage) {
  Check({900, 100, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, false}, 93);
  ThreadPool pool(2);
  Check({961, 96, 9, 9, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, false, true}, 94, &pool);
}

// Zero weight zero points (quantize_static's int8 weights), on both driver paths; uint8
// weights with zero point 0 still need the pixel sums (their stored zero point is -128).
TEST_F(Q8ConvWTest, SymmetricWeights) {
  uint32_t seed = 120;
  for (bool xs : {false, true}) {
    Check({13, 3, 9, 45, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, xs, true}, seed++);
    Check({13, 3, 9, 45, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false, xs, true}, seed++);
    Check({5, 4, 13, 10, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, true, xs, true}, seed++);
  }
  Check({900, 100, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, false, true}, seed++);
}

// Enough channels that the padded planes are filled by both threads.
TEST_F(Q8ConvWTest, PlanesFilledByThreads) {
  ThreadPool pool(2);
  Check({8, 96, 48, 47, 3, 3, 1, 1, 1, 1, 1, 2, 1, 0, true, false, true}, 130, &pool);
  Check({8, 96, 45, 48, 3, 3, 2, 2, 1, 1, 0, 1, 2, 1, false, true}, 131, &pool);
}

}  // namespace
}  // namespace onyx::linalg
