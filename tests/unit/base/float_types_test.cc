#include "base/float_types.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace onyx {
namespace {

TEST(Float16, RoundTripsExactValues) {
  for (float f : {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 6.103515625e-05f, 5.9604645e-08f}) {
    EXPECT_EQ(HalfBitsToFloat(FloatToHalfBits(f)), f) << f;
  }
}

TEST(Float16, RoundsToNearestEven) {
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1.0).
  EXPECT_EQ(FloatToHalfBits(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  // 1 + 3*2^-11 is halfway between 1+2^-10 (odd) and 1+2^-9 (even).
  EXPECT_EQ(FloatToHalfBits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
  EXPECT_EQ(FloatToHalfBits(70000.0f), 0x7C00);  // overflow to infinity
  EXPECT_TRUE(std::isnan(HalfBitsToFloat(FloatToHalfBits(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(BFloat16, RoundsToNearestEven) {
  EXPECT_EQ(FloatToBFloat16Bits(1.0f), 0x3F80);
  EXPECT_EQ(BFloat16BitsToFloat(FloatToBFloat16Bits(3.140625f)), 3.140625f);
  EXPECT_TRUE(std::isnan(BFloat16BitsToFloat(FloatToBFloat16Bits(std::nanf("")))));
}

TEST(Float8, E4M3FnKnownCodes) {
  EXPECT_EQ(FloatToMinifloat(448.0f, DataType::kFloat8E4M3FN, true), 0x7E);
  EXPECT_EQ(FloatToMinifloat(1000.0f, DataType::kFloat8E4M3FN, true), 0x7E);
  EXPECT_EQ(FloatToMinifloat(1000.0f, DataType::kFloat8E4M3FN, false), 0x7F);
  EXPECT_EQ(FloatToMinifloat(1.0f, DataType::kFloat8E4M3FN, true), 0x38);
  EXPECT_EQ(MinifloatToFloat(0x38, DataType::kFloat8E4M3FN), 1.0f);
  EXPECT_EQ(MinifloatToFloat(0x01, DataType::kFloat8E4M3FN), std::ldexp(1.0f, -9));  // smallest subnormal
  EXPECT_TRUE(std::isnan(MinifloatToFloat(0x7F, DataType::kFloat8E4M3FN)));
}

TEST(Float8, E5M2HasInfinity) {
  EXPECT_EQ(FloatToMinifloat(std::numeric_limits<float>::infinity(), DataType::kFloat8E5M2, false), 0x7C);
  EXPECT_TRUE(std::isinf(MinifloatToFloat(0x7C, DataType::kFloat8E5M2)));
  EXPECT_EQ(MinifloatToFloat(0x7B, DataType::kFloat8E5M2), 57344.0f);
}

TEST(Float8, FnuzHasSingleNanAndNoNegativeZero) {
  EXPECT_EQ(FloatToMinifloat(-0.0f, DataType::kFloat8E4M3FNUZ, true), 0x00);
  EXPECT_EQ(FloatToMinifloat(std::nanf(""), DataType::kFloat8E5M2FNUZ, true), 0x80);
  EXPECT_TRUE(std::isnan(MinifloatToFloat(0x80, DataType::kFloat8E4M3FNUZ)));
}

TEST(Float4, E2M1AllCodes) {
  const float values[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  for (int code = 0; code < 8; ++code) {
    EXPECT_EQ(MinifloatToFloat(static_cast<uint8_t>(code), DataType::kFloat4E2M1), values[code]);
    EXPECT_EQ(MinifloatToFloat(static_cast<uint8_t>(code | 8), DataType::kFloat4E2M1), -values[code]);
    EXPECT_EQ(FloatToMinifloat(values[code], DataType::kFloat4E2M1, true), code);
  }
  EXPECT_EQ(FloatToMinifloat(100.0f, DataType::kFloat4E2M1, true), 7);
}

TEST(E8M0, PowersOfTwo) {
  EXPECT_EQ(FloatToE8M0(1.0f, true, E8M0Rounding::kUp), 127);
  EXPECT_EQ(FloatToE8M0(3.0f, true, E8M0Rounding::kUp), 129);
  EXPECT_EQ(FloatToE8M0(3.0f, true, E8M0Rounding::kDown), 128);
  EXPECT_EQ(E8M0ToFloat(130), 8.0f);
  EXPECT_TRUE(std::isnan(E8M0ToFloat(0xFF)));
}

}  // namespace
}  // namespace onyx
