// Q8ConvNhwc's addend (a QLinearAdd that follows the conv: com.onyx.QLinearConvAdd): each stored
// code must be QLinearAdd's row function (linalg::Q8AddU8 / Q8AddS8, checked against ONNX Runtime
// in the Python tests) of the codes without it (those are checked against a scalar reference in
// q8_conv_nhwc_test.cc) and the other image's, with the conv as the add's A and as its B, for
// uint8 and int8 outputs, saturating sums, partial panels and tiles, row strides wider than M,
// and threads; nothing past M or the output written.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "linalg/isa_variant_test.h"
#include "linalg/q8_conv_nhwc.h"
#include "linalg/q8_quantize.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {
namespace {

using Q8ConvNhwcAddTest = Q8VnniTest;

void CheckAdd(int64_t m, int64_t c, int64_t hw, int64_t k, int64_t extra_ldc, int64_t extra_ldo, uint32_t seed,
              ThreadPool* pool) {
  Q8ConvNhwcShape s;
  s.channels = c, s.ih = s.iw = hw, s.kh = s.kw = k, s.top = s.left = k / 2;
  s.oh = s.ow = hw;
  const int64_t pixels = hw * hw, ldc = m + extra_ldc, ldo = m + extra_ldo;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> ratio(0.2f, 2.5f);
  std::vector<uint8_t> w(static_cast<size_t>(m * c * k * k)), x(static_cast<size_t>(pixels * c));
  std::vector<uint8_t> other(static_cast<size_t>(pixels * ldo));
  for (auto& v : w) v = static_cast<uint8_t>(byte(rng));
  for (auto& v : x) v = static_cast<uint8_t>(byte(rng));
  for (auto& v : other) v = static_cast<uint8_t>(byte(rng));
  const PackedQ8Nhwc packed(m, c, k, k, w.data(), true, nullptr, false);
  ASSERT_FALSE(packed.empty());
  std::vector<float> scale(static_cast<size_t>(m));
  for (int64_t i = 0; i < m; ++i) scale[static_cast<size_t>(i)] = 0.0004f + 0.00003f * static_cast<float>(i % 11);
  for (bool out_signed : {false, true}) {
    for (bool conv_is_a : {true, false}) {
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
      Q8ConvAddend add;
      add.other = other.data();
      add.ldo = ldo;
      // The other image's ratio above 1.2: its codes' spread alone (255) passes the type's range,
      // so some sums saturate.
      const float y_ratio = ratio(rng), r_ratio = 1.2f + 0.7f * ratio(rng);
      add.ra = conv_is_a ? y_ratio : r_ratio, add.rb = conv_is_a ? r_ratio : y_ratio;
      const int za = byte(rng) - (out_signed ? 128 : 0), zb = byte(rng) - (out_signed ? 128 : 0);
      const int zc = byte(rng) - (out_signed ? 128 : 0);
      add.fixed = static_cast<float>(zc) - (add.ra * static_cast<float>(za) + add.rb * static_cast<float>(zb));
      add.conv_is_a = conv_is_a;
      std::vector<uint8_t> want(plain.size(), 0xA5);
      for (int64_t p = 0; p < pixels; ++p) {
        const uint8_t* y = plain.data() + p * ldc;
        const uint8_t* r = other.data() + p * ldo;
        const uint8_t* a = conv_is_a ? y : r;
        const uint8_t* b = conv_is_a ? r : y;
        if (out_signed)
          Q8AddS8(reinterpret_cast<const int8_t*>(a), add.ra, reinterpret_cast<const int8_t*>(b), 1, add.rb, add.fixed,
                  m, reinterpret_cast<int8_t*>(want.data() + p * ldc));
        else
          Q8AddU8(a, add.ra, b, 1, add.rb, add.fixed, m, want.data() + p * ldc);
      }
      std::vector<uint8_t> got(plain.size(), 0xA5);
      o.c = got.data();
      Q8ConvNhwc(packed, s, x.data(), false, 117, o, pool, nullptr, &add);
      int saturated = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i], want[i]) << "at " << i << (out_signed ? " int8" : " uint8") << (conv_is_a ? " (A)" : " (B)");
        const bool stored = i < static_cast<size_t>(pixels * ldc) && static_cast<int64_t>(i) % ldc < m;
        if (stored) saturated += out_signed ? (got[i] == 0x80 || got[i] == 0x7F) : (got[i] == 0 || got[i] == 255);
      }
      EXPECT_GT(saturated, 0) << "the sums should reach the type's ends somewhere";
    }
  }
}

TEST_F(Q8ConvNhwcAddTest, EveryOutputCodeIsTheSumWithTheOtherImage) {
  CheckAdd(64, 16, 7, 1, 0, 0, 1, nullptr);  // one whole panel, a partial tile
  CheckAdd(70, 8, 5, 3, 0, 3, 2, nullptr);   // a 6-channel last panel, ldo > M
  CheckAdd(17, 4, 6, 3, 9, 0, 3, nullptr);   // one short panel, ldc > M
  ThreadPool pool(2);
  CheckAdd(130, 32, 9, 3, 0, 5, 4, &pool);   // three panels over two threads
}

TEST_F(Q8ConvNhwcAddTest, ALutAndAnAddendTogetherAreRefused) {
  const std::vector<uint8_t> w(4 * 4, 1), x(4, 0), lut(256, 0);
  std::vector<uint8_t> y(4);
  const PackedQ8Nhwc packed(4, 4, 1, 1, w.data(), true, nullptr, false);
  Q8ConvNhwcShape s;
  s.channels = 4, s.ih = s.iw = s.oh = s.ow = 1;
  const float scale = 1.0f;
  Q8Output o;
  o.kind = Q8Output::kQuantized;
  o.c = y.data(), o.ldc = 4, o.scale = &scale;
  Q8ConvAddend add;
  add.other = x.data(), add.ldo = 4;
  EXPECT_THROW(Q8ConvNhwc(packed, s, x.data(), false, 0, o, nullptr, lut.data(), &add), std::invalid_argument);
}

}  // namespace
}  // namespace onyx::linalg
