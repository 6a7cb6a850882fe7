// Q8ConvNhwc's lut (a per-code table each output code is replaced by: com.onyx.QLinearConvSiLU's
// SiLU): its codes must be lut[the codes without it] (those are checked against a scalar reference
// in q8_conv_nhwc_test.cc), in registers (AVX-512 VBMI) and in memory after each tile (CPUs
// without it), for uint8 and int8 outputs, partial panels and tiles, a row stride wider than M,
// and threads; nothing past M or the output written.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "linalg/isa_variant_test.h"
#include "linalg/q8_conv_nhwc.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {
namespace {

class Q8ConvNhwcLutTest : public Q8VnniTest {
 protected:
  void TearDown() override {
    Q8ConvNhwcLutInRegisters(true);
    Q8VnniTest::TearDown();
  }
};

void CheckLut(int64_t m, int64_t c, int64_t hw, int64_t k, int64_t extra_ldc, uint32_t seed, ThreadPool* pool) {
  Q8ConvNhwcShape s;
  s.channels = c, s.ih = s.iw = hw, s.kh = s.kw = k, s.top = s.left = k / 2;
  s.oh = s.ow = hw;
  const int64_t pixels = hw * hw, ldc = m + extra_ldc;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<uint8_t> w(static_cast<size_t>(m * c * k * k)), x(static_cast<size_t>(pixels * c)), lut(256);
  for (auto& v : w) v = static_cast<uint8_t>(byte(rng));
  for (auto& v : x) v = static_cast<uint8_t>(byte(rng));
  for (auto& v : lut) v = static_cast<uint8_t>(byte(rng));  // every entry differs from an identity
  const PackedQ8Nhwc packed(m, c, k, k, w.data(), true, nullptr, false);
  ASSERT_FALSE(packed.empty());
  std::vector<float> scale(static_cast<size_t>(m));
  for (int64_t i = 0; i < m; ++i) scale[static_cast<size_t>(i)] = 0.0004f + 0.00003f * static_cast<float>(i % 11);
  for (bool out_signed : {false, true}) {
    Q8Output o;
    o.kind = Q8Output::kQuantized;
    o.ldc = ldc;
    o.scale = scale.data();
    o.scale_per_column = true;
    o.zero_point = out_signed ? -5 : 120;
    o.out_signed = out_signed;
    std::vector<uint8_t> plain(static_cast<size_t>(pixels * ldc + 7), 0xA5);
    o.c = plain.data();
    Q8ConvNhwc(packed, s, x.data(), false, 117, o, pool);
    for (bool in_registers : {true, false}) {
      Q8ConvNhwcLutInRegisters(in_registers);
      std::vector<uint8_t> looked(plain.size(), 0xA5);
      o.c = looked.data();
      Q8ConvNhwc(packed, s, x.data(), false, 117, o, pool, lut.data());
      for (size_t i = 0; i < plain.size(); ++i) {
        const bool stored = i < static_cast<size_t>(pixels * ldc) && static_cast<int64_t>(i) % ldc < m;
        ASSERT_EQ(looked[i], stored ? lut[plain[i]] : 0xA5)
            << "at " << i << (in_registers ? " (registers)" : " (memory)") << (out_signed ? " int8" : " uint8");
      }
    }
  }
}

TEST_F(Q8ConvNhwcLutTest, EveryOutputCodeLookedUp) {
  CheckLut(64, 16, 7, 1, 0, 1, nullptr);   // one whole panel, a partial tile
  CheckLut(70, 8, 5, 3, 0, 2, nullptr);    // a 6-channel last panel
  CheckLut(17, 4, 6, 3, 9, 3, nullptr);    // one short panel, ldc > M
  ThreadPool pool(2);
  CheckLut(130, 32, 9, 3, 0, 4, &pool);    // three panels over two threads
}

}  // namespace
}  // namespace onyx::linalg
