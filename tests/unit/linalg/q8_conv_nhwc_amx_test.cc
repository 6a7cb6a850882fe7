// The AMX form of the direct channels-last int8 convolution (Q8ConvNhwcAmx) against a scalar
// reference written here (the exact int32 sum over the window, padding taps reading the zero
// point, requantized as ONNX Runtime does) and against the AVX-512 VNNI kernel, byte for byte
// (integer sums: the two must agree exactly, bytes past M and past the output untouched too):
// kernels 1x1 / 3x3 / 7x7, strides 1 and 2, dilation, every padding side, C not a multiple of 64
// (4 to 192), output channels short of and past the 64-channel panel and its 32-channel halves,
// pixel counts not a multiple of the 32-pixel block, uint8 and int8 images and weights, a lut
// (in registers and in memory) and a QLinearAdd addend, 1 to 3 threads. Skips without AMX-INT8
// (or where Linux refuses the tile state).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "linalg/q8_conv_nhwc.h"
#include "linalg/q8_conv_nhwc_amx.h"
#include "linalg/q8_conv_nhwc_avx512_vnni.h"
#include "linalg/q8_conv_nhwc_reference.h"
#include "linalg/q8_gemm.h"
#include "linalg/q8_quantize.h"
#include "platform/cpu_features.h"
#include "platform/thread_pool.h"

#if defined(__x86_64__)  // the kernels exist only there

namespace onyx::linalg {
namespace {

class Q8ConvNhwcAmxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!GetCpuFeatures().amx_int8 || !RequestAmxPermission()) GTEST_SKIP() << "no AMX-INT8 (or no tile permission)";
    ASSERT_TRUE(Q8GemmWAvailable());  // the VNNI kernel compared against
  }
  void TearDown() override { Q8ConvNhwcLutInRegisters(true); }
};

struct Case {
  int64_t m, c, ih, iw, kh, kw, sy, sx, dy, dx, top, left, bottom, right;
  bool w_signed, x_signed;
  int64_t extra_ldc = 0;
};

// Runs one kernel with the given post-op into a fresh buffer (0xA5 everywhere it must not write).
template <typename Kernel>
std::vector<uint8_t> Run(Kernel kernel, const PackedQ8Nhwc& w, const Q8ConvNhwcShape& s, const std::vector<uint8_t>& x,
                         bool x_signed, int32_t x_zp, Q8Output o, ThreadPool* pool, const uint8_t* lut,
                         const Q8ConvAddend* add, size_t size) {
  std::vector<uint8_t> y(size, 0xA5);
  o.c = y.data();
  kernel(w, s, x.data(), x_signed, x_zp, o, pool, lut, add);
  return y;
}

void Check(const Case& p, uint32_t seed, ThreadPool* pool = nullptr) {
  SCOPED_TRACE(::testing::Message() << "m " << p.m << " c " << p.c << " " << p.ih << "x" << p.iw << " k " << p.kh
                                    << "x" << p.kw << " stride " << p.sy << "," << p.sx << " seed " << seed);
  Q8ConvNhwcShape s;
  s.channels = p.c, s.ih = p.ih, s.iw = p.iw, s.kh = p.kh, s.kw = p.kw, s.sy = p.sy, s.sx = p.sx;
  s.dy = p.dy, s.dx = p.dx, s.top = p.top, s.left = p.left;
  s.oh = (p.ih + p.top + p.bottom - ((p.kh - 1) * p.dy + 1)) / p.sy + 1;
  s.ow = (p.iw + p.left + p.right - ((p.kw - 1) * p.dx + 1)) / p.sx + 1;
  const int64_t pixels = s.oh * s.ow, ldc = p.m + p.extra_ldc;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<uint8_t> w(static_cast<size_t>(p.m * p.c * p.kh * p.kw)), x(static_cast<size_t>(p.ih * p.iw * p.c));
  std::vector<uint8_t> lut(256), other(static_cast<size_t>(pixels * ldc));
  for (auto* v : {&w, &x, &lut, &other})
    for (auto& b : *v) b = static_cast<uint8_t>(byte(rng));
  const int32_t w_zero = p.w_signed ? 0 : 128;
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
    scale[static_cast<size_t>(i)] = static_cast<float>((70.0 + 17.0 * static_cast<double>(i % 7)) / peak);
    bias[static_cast<size_t>(i)] = static_cast<int32_t>((i * 7907) % 3000) - 1500;
  }
  const size_t size = static_cast<size_t>(pixels * ldc + 5);
  for (bool out_signed : {false, true}) {
    Q8Output o;
    o.kind = Q8Output::kQuantized;
    o.ldc = ldc;
    o.scale = scale.data();
    o.scale_per_column = true;
    o.bias_int = bias.data();
    o.zero_point = out_signed ? 3 : 125;
    o.out_signed = out_signed;
    // Plain codes: the reference's, exactly.
    const auto amx = Run(Q8ConvNhwcAmx, packed, s, x, p.x_signed, x_zp, o, pool, nullptr, nullptr, size);
    for (int64_t px = 0; px < pixels; ++px)
      for (int64_t ch = 0; ch < ldc; ++ch) {
        const uint8_t have = amx[static_cast<size_t>(px * ldc + ch)];
        if (ch >= p.m) {
          ASSERT_EQ(have, 0xA5) << "wrote past M at pixel " << px;
          continue;
        }
        const float f = static_cast<float>(static_cast<int32_t>(ref[static_cast<size_t>(px * p.m + ch)]) +
                                           bias[static_cast<size_t>(ch)]) *
                        scale[static_cast<size_t>(ch)];
        const float lo = (out_signed ? -128.0f : 0.0f) - static_cast<float>(o.zero_point);
        const float hi = (out_signed ? 127.0f : 255.0f) - static_cast<float>(o.zero_point);
        const auto expect = static_cast<int32_t>(std::nearbyint(std::min(std::max(f, lo), hi))) + o.zero_point;
        ASSERT_EQ(out_signed ? static_cast<int8_t>(have) : have, expect) << "pixel " << px << " channel " << ch;
      }
    for (size_t i = static_cast<size_t>(pixels * ldc); i < size; ++i) ASSERT_EQ(amx[i], 0xA5) << "wrote past the output";
    ASSERT_EQ(amx, Run(Q8ConvNhwcAvx512Vnni, packed, s, x, p.x_signed, x_zp, o, pool, nullptr, nullptr, size));
    // A lut, looked up in registers and in memory: lut[plain code], and the VNNI kernel's bytes.
    std::vector<uint8_t> want_lut = amx;
    for (int64_t px = 0; px < pixels; ++px)
      for (int64_t ch = 0; ch < p.m; ++ch) {
        uint8_t& v = want_lut[static_cast<size_t>(px * ldc + ch)];
        v = lut[v];
      }
    for (bool in_registers : {true, false}) {
      Q8ConvNhwcLutInRegisters(in_registers);
      const auto got = Run(Q8ConvNhwcAmx, packed, s, x, p.x_signed, x_zp, o, pool, lut.data(), nullptr, size);
      ASSERT_EQ(got, want_lut) << "lut in registers " << in_registers;
      ASSERT_EQ(got, Run(Q8ConvNhwcAvx512Vnni, packed, s, x, p.x_signed, x_zp, o, pool, lut.data(), nullptr, size));
    }
    Q8ConvNhwcLutInRegisters(true);
    // An addend: QLinearAdd's row function of the plain codes and the other image's, as the VNNI kernel.
    Q8ConvAddend add;
    add.other = other.data();
    add.ldo = ldc;
    add.ra = 0.8f, add.rb = 1.7f, add.fixed = out_signed ? -20.5f : 11.25f;
    add.conv_is_a = (seed & 1) != 0;
    std::vector<uint8_t> want_add = amx;
    for (int64_t px = 0; px < pixels; ++px) {
      const uint8_t* y = amx.data() + px * ldc;
      const uint8_t* r = other.data() + px * ldc;
      const uint8_t* a = add.conv_is_a ? y : r;
      const uint8_t* b = add.conv_is_a ? r : y;
      if (out_signed)
        Q8AddS8(reinterpret_cast<const int8_t*>(a), add.ra, reinterpret_cast<const int8_t*>(b), 1, add.rb, add.fixed,
                p.m, reinterpret_cast<int8_t*>(want_add.data() + px * ldc));
      else
        Q8AddU8(a, add.ra, b, 1, add.rb, add.fixed, p.m, want_add.data() + px * ldc);
    }
    const auto got = Run(Q8ConvNhwcAmx, packed, s, x, p.x_signed, x_zp, o, pool, nullptr, &add, size);
    ASSERT_EQ(got, want_add);
    ASSERT_EQ(got, Run(Q8ConvNhwcAvx512Vnni, packed, s, x, p.x_signed, x_zp, o, pool, nullptr, &add, size));
  }
}

TEST_F(Q8ConvNhwcAmxTest, KernelSizesAndChannelCounts) {
  uint32_t seed = 1;
  for (bool ws : {false, true})
    for (bool xs : {false, true}) {
      Check({64, 64, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, ws, xs}, seed++);    // 49 pixels: a partial block
      Check({70, 64, 8, 8, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, ws, xs}, seed++);    // pointwise in place, 6-channel panel
      Check({40, 192, 7, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, ws, xs}, seed++);   // pointwise, 35 pixels: a staged tail
      Check({33, 68, 6, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, ws, xs}, seed++);    // C past a chunk, a 1-channel half
      Check({17, 12, 9, 7, 7, 7, 1, 1, 1, 1, 3, 3, 3, 3, ws, xs}, seed++);    // 7x7, C 12
      Check({130, 60, 5, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, ws, xs}, seed++);   // three panels, C short of a chunk
      Check({8, 4, 10, 10, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, ws, xs}, seed++);    // C 4, M 8
    }
}

// A pointwise conv with C below 64 reads its uint8 image in place through tiles C codes wide (the
// codes of the next pixel, which follow each row's C, must not be multiplied); int8 images go
// through the canvas as before.
TEST_F(Q8ConvNhwcAmxTest, NarrowPointwiseInPlace) {
  uint32_t seed = 20;
  for (bool ws : {false, true})
    for (bool xs : {false, true}) {
      Check({16, 32, 13, 11, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, ws, xs}, seed++);  // 143 pixels: a staged tail
      Check({96, 48, 8, 8, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, ws, xs}, seed++);    // whole blocks, two panels
      Check({40, 36, 7, 9, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, ws, xs, 8}, seed++); // C 36, ldc > M
      Check({24, 60, 5, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, ws, xs}, seed++);    // one partial block only
    }
  ThreadPool pool(2);
  Check({192, 32, 28, 28, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, true, false}, seed++, &pool);  // MobileNetV2's expand
  Check({16, 32, 40, 40, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, true, false}, seed++, &pool);   // and its 32 -> 16
}

TEST_F(Q8ConvNhwcAmxTest, StridesDilationPadding) {
  uint32_t seed = 40;
  for (bool ws : {false, true})
    for (bool xs : {false, true}) {
      Check({32, 64, 13, 10, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, ws, xs}, seed++);   // stride 2
      Check({96, 128, 14, 14, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, ws, xs}, seed++);  // strided pointwise
      Check({9, 68, 11, 12, 3, 3, 1, 1, 2, 3, 2, 3, 2, 3, ws, xs}, seed++);    // dilation
      Check({20, 12, 9, 7, 2, 3, 1, 2, 1, 1, 0, 2, 1, 0, ws, xs}, seed++);     // asymmetric pads, strides differ
      Check({24, 4, 15, 13, 7, 7, 2, 2, 1, 1, 3, 3, 2, 3, ws, xs}, seed++);    // 7x7 stride 2 (a stem)
      Check({40, 64, 8, 8, 3, 3, 1, 1, 1, 1, 0, 0, 2, 1, ws, xs, 24}, seed++); // pads at the end only, ldc > M
    }
}

TEST_F(Q8ConvNhwcAmxTest, Threads) {
  for (int threads : {2, 3}) {
    ThreadPool pool(threads);
    uint32_t seed = 80 + static_cast<uint32_t>(threads);
    Check({256, 64, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, true, false}, seed++, &pool);    // panel runs shared
    Check({64, 64, 30, 11, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, false, false}, seed++, &pool);  // many blocks
    Check({100, 192, 12, 12, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, false, true}, seed++, &pool);
  }
}

// The tiles run from 32 input channels on (a tile row is 64 codes; at 16 the VNNI kernel won).
TEST_F(Q8ConvNhwcAmxTest, RunsFromThirtyTwoChannels) {
  Q8ConvNhwcShape s;
  s.ih = s.iw = s.oh = s.ow = 8;
  for (int64_t c : {16, 28, 32, 64}) {
    const std::vector<uint8_t> w(static_cast<size_t>(8 * c), 1);
    const PackedQ8Nhwc packed(8, c, 1, 1, w.data(), true, nullptr, false);
    s.channels = c;
    EXPECT_EQ(Q8ConvNhwcAmxWorthIt(packed, s), c >= 32) << "C " << c;
  }
}

}  // namespace
}  // namespace onyx::linalg

#endif  // __x86_64__
