// WidenHalf (float16 -> float, HalfBodyToFloat's widening of float16 weights) in each ISA
// variant against the scalar conversion in base/float_types: every 16-bit pattern bit for bit,
// signaling NaNs kept, at lengths and offsets that end in every tail.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "base/float_types.h"
#include "isa_variant_test.h"
#include "linalg/f16_widen.h"

namespace onyx::linalg {
namespace {

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

using WidenHalfIsa = LinalgIsaVariant;

TEST_P(WidenHalfIsa, EveryBitPatternMatchesTheScalarConversion) {
  std::vector<uint16_t> src(65536 + 40);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint16_t>(i);
  for (int64_t offset : {0, 3}) {
    for (int64_t n : {int64_t{65536}, int64_t{37}, int64_t{16}, int64_t{15}, int64_t{1}, int64_t{0}}) {
      std::vector<float> dst(static_cast<size_t>(n) + 1, 7.0f);
      WidenHalf(src.data() + offset, dst.data(), n);
      int wrong = 0;
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = src[static_cast<size_t>(offset + i)];
        if (Bits(dst[i]) != Bits(HalfBitsToFloat(h)) && wrong++ < 5)
          ADD_FAILURE() << "bits 0x" << std::hex << h << ": got 0x" << Bits(dst[i]) << ", want 0x"
                        << Bits(HalfBitsToFloat(h));
      }
      EXPECT_EQ(wrong, 0) << "n " << n << " offset " << offset;
      EXPECT_EQ(dst[static_cast<size_t>(n)], 7.0f) << "wrote past n " << n;
    }
  }
}

TEST_P(WidenHalfIsa, ASignalingNanAmongNormalsStaysSignaling) {
  std::vector<uint16_t> src(32, 0x3C00);  // 1.0
  src[5] = 0x7C01;                        // signaling NaN
  src[20] = 0xFE00;                       // negative quiet NaN
  std::vector<float> dst(32);
  WidenHalf(src.data(), dst.data(), 32);
  EXPECT_EQ(Bits(dst[5]), 0x7F802000u);
  EXPECT_EQ(Bits(dst[20]), 0xFFC00000u);
  EXPECT_EQ(dst[4], 1.0f);
  EXPECT_EQ(dst[31], 1.0f);
}

INSTANTIATE_TEST_SUITE_P(Isa, WidenHalfIsa, ::testing::Values("avx512", "avx2", "scalar"));

}  // namespace
}  // namespace onyx::linalg
