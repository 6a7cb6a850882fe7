#include "base/float_types.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
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

// The compiler's own _Float16 conversions (IEEE, round to nearest even) as the oracle: every
// half decodes the same, and floats sampled across the whole bit space encode the same.
TEST(Float16, MatchesCompilerConversions) {
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    _Float16 ref;
    const auto bits = static_cast<uint16_t>(h);
    std::memcpy(&ref, &bits, 2);
    const float got = HalfBitsToFloat(bits);
    if (std::isnan(static_cast<float>(ref))) EXPECT_TRUE(std::isnan(got)) << h;
    else EXPECT_EQ(got, static_cast<float>(ref)) << h;
  }
  for (uint64_t u = 0; u <= 0xFFFFFFFFull; u += 4093) {
    float f;
    const auto bits = static_cast<uint32_t>(u);
    std::memcpy(&f, &bits, 4);
    const auto ref = static_cast<_Float16>(f);
    uint16_t ref_bits;
    std::memcpy(&ref_bits, &ref, 2);
    const uint16_t got = FloatToHalfBits(f);
    if (std::isnan(f)) EXPECT_TRUE((got & 0x7C00) == 0x7C00 && (got & 0x3FF)) << bits;
    else ASSERT_EQ(got, ref_bits) << "float bits " << bits;
  }
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

// The saturate / non-saturate tables of ONNX's Cast (opset 19+), format by format.
TEST(Float8, CastSaturateTables) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  // E4M3FN: no Inf; NaN is S.1111.111.
  EXPECT_EQ(FloatToMinifloat(inf, DataType::kFloat8E4M3FN, true), 0x7E);
  EXPECT_EQ(FloatToMinifloat(-inf, DataType::kFloat8E4M3FN, true), 0xFE);
  EXPECT_EQ(FloatToMinifloat(inf, DataType::kFloat8E4M3FN, false), 0x7F);
  EXPECT_EQ(FloatToMinifloat(-inf, DataType::kFloat8E4M3FN, false), 0xFF);  // -Inf -> -NaN
  EXPECT_EQ(FloatToMinifloat(-1e6f, DataType::kFloat8E4M3FN, false), 0xFF);
  EXPECT_EQ(FloatToMinifloat(nan, DataType::kFloat8E4M3FN, true), 0x7F);
  EXPECT_EQ(FloatToMinifloat(-nan, DataType::kFloat8E4M3FN, false), 0xFF);
  EXPECT_EQ(FloatToMinifloat(-0.0f, DataType::kFloat8E4M3FN, true), 0x80);
  EXPECT_EQ(FloatToMinifloat(-1e-7f, DataType::kFloat8E4M3FN, true), 0x80);  // rounds to -0
  // E5M2: IEEE-like Inf.
  EXPECT_EQ(FloatToMinifloat(inf, DataType::kFloat8E5M2, true), 0x7B);
  EXPECT_EQ(FloatToMinifloat(-inf, DataType::kFloat8E5M2, false), 0xFC);
  EXPECT_EQ(FloatToMinifloat(1e6f, DataType::kFloat8E5M2, false), 0x7C);
  EXPECT_TRUE(std::isnan(MinifloatToFloat(FloatToMinifloat(nan, DataType::kFloat8E5M2, false), DataType::kFloat8E5M2)));
  // FNUZ: one NaN (0x80), no -0, no Inf.
  for (DataType t : {DataType::kFloat8E4M3FNUZ, DataType::kFloat8E5M2FNUZ}) {
    EXPECT_EQ(FloatToMinifloat(inf, t, true), 0x7F);
    EXPECT_EQ(FloatToMinifloat(-inf, t, true), 0xFF);
    EXPECT_EQ(FloatToMinifloat(inf, t, false), 0x80);
    EXPECT_EQ(FloatToMinifloat(-inf, t, false), 0x80);
    EXPECT_EQ(FloatToMinifloat(-nan, t, false), 0x80);
    EXPECT_EQ(FloatToMinifloat(-1e-7f, t, true), 0x00);
  }
  EXPECT_EQ(MinifloatToFloat(0x7F, DataType::kFloat8E4M3FNUZ), 240.0f);
  EXPECT_EQ(MinifloatToFloat(0x7F, DataType::kFloat8E5M2FNUZ), 57344.0f);
}

// "[x] > FLT_MAX" is judged after rounding to the target's mantissa, ties to even.
TEST(Float8, OverflowIsJudgedAfterRounding) {
  // E4M3FN: 448 = 1.75 * 2^8 is the largest; 464 is the tie with the (NaN) code above: even wins.
  EXPECT_EQ(FloatToMinifloat(464.0f, DataType::kFloat8E4M3FN, false), 0x7E);
  EXPECT_EQ(FloatToMinifloat(465.0f, DataType::kFloat8E4M3FN, false), 0x7F);
  EXPECT_EQ(FloatToMinifloat(465.0f, DataType::kFloat8E4M3FN, true), 0x7E);
  // E5M2: 61440 is the tie between 57344 (odd mantissa) and 65536: it rounds up to Inf.
  EXPECT_EQ(FloatToMinifloat(61439.0f, DataType::kFloat8E5M2, false), 0x7B);
  EXPECT_EQ(FloatToMinifloat(61440.0f, DataType::kFloat8E5M2, false), 0x7C);
  EXPECT_EQ(FloatToMinifloat(61440.0f, DataType::kFloat8E5M2, true), 0x7B);
}

TEST(Float8, SubnormalsRoundToNearestEven) {
  EXPECT_EQ(FloatToMinifloat(std::ldexp(1.0f, -9), DataType::kFloat8E4M3FN, true), 0x01);
  EXPECT_EQ(FloatToMinifloat(std::ldexp(1.0f, -10), DataType::kFloat8E4M3FN, true), 0x00);     // tie -> 0
  EXPECT_EQ(FloatToMinifloat(std::ldexp(1.5f, -10), DataType::kFloat8E4M3FN, true), 0x01);
  EXPECT_EQ(FloatToMinifloat(std::ldexp(3.0f, -10), DataType::kFloat8E4M3FN, true), 0x02);     // tie -> even
  EXPECT_EQ(FloatToMinifloat(std::ldexp(15.0f, -10), DataType::kFloat8E4M3FN, true), 0x08);    // up to min normal
  EXPECT_EQ(FloatToMinifloat(std::ldexp(1.0f, -16), DataType::kFloat8E5M2, true), 0x01);
  EXPECT_EQ(FloatToMinifloat(std::ldexp(1.0f, -17), DataType::kFloat8E5M2FNUZ, true), 0x01);
  EXPECT_EQ(MinifloatToFloat(0x01, DataType::kFloat8E5M2FNUZ), std::ldexp(1.0f, -17));
  // A carry out of the mantissa bumps the exponent: 1.9375 rounds to 2 in e4m3 (3 mantissa bits).
  EXPECT_EQ(FloatToMinifloat(1.9375f, DataType::kFloat8E4M3FN, true), 0x40);
}

TEST(Float4, E2M1RoundsTiesToEvenAndSaturates) {
  EXPECT_EQ(FloatToMinifloat(0.25f, DataType::kFloat4E2M1, true), 0);  // 0 vs 0.5
  EXPECT_EQ(FloatToMinifloat(0.75f, DataType::kFloat4E2M1, true), 2);  // 0.5 vs 1.0
  EXPECT_EQ(FloatToMinifloat(2.5f, DataType::kFloat4E2M1, true), 4);   // 2 vs 3
  EXPECT_EQ(FloatToMinifloat(5.0f, DataType::kFloat4E2M1, true), 6);   // 4 vs 6
  EXPECT_EQ(FloatToMinifloat(-std::numeric_limits<float>::infinity(), DataType::kFloat4E2M1, false), 0xF);
  // No NaN in e2m1: the ONNX conformance data (test_cast_FLOAT_to_FLOAT4E2M1) has NaN -> 0x8.
  EXPECT_EQ(FloatToMinifloat(std::numeric_limits<float>::quiet_NaN(), DataType::kFloat4E2M1, true), 0x8);
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

// The two columns of ONNX Cast's float8e8m0 table, and the three rounding modes.
TEST(E8M0, CastTableAndRoundModes) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(FloatToE8M0(0.0f, true, E8M0Rounding::kUp), 0x00);
  EXPECT_EQ(FloatToE8M0(0.0f, false, E8M0Rounding::kNearest), 0xFF);
  EXPECT_EQ(FloatToE8M0(inf, true, E8M0Rounding::kUp), 0xFE);
  EXPECT_EQ(FloatToE8M0(inf, false, E8M0Rounding::kNearest), 0xFF);
  EXPECT_EQ(FloatToE8M0(std::ldexp(1.0f, -130), true, E8M0Rounding::kUp), 0x00);
  EXPECT_EQ(FloatToE8M0(std::ldexp(1.0f, -130), false, E8M0Rounding::kNearest), 0xFF);
  EXPECT_EQ(FloatToE8M0(std::ldexp(1.5f, 127), true, E8M0Rounding::kUp), 0xFE);
  EXPECT_EQ(FloatToE8M0(std::ldexp(1.5f, 127), false, E8M0Rounding::kNearest), 0xFF);
  EXPECT_EQ(FloatToE8M0(std::ldexp(1.5f, 127), false, E8M0Rounding::kDown), 0xFE);
  EXPECT_EQ(FloatToE8M0(1.5f, true, E8M0Rounding::kNearest), 128);  // tie goes up
  EXPECT_EQ(FloatToE8M0(1.4f, true, E8M0Rounding::kNearest), 127);
  EXPECT_EQ(FloatToE8M0(1.9f, true, E8M0Rounding::kDown), 127);
  EXPECT_EQ(FloatToE8M0(std::ldexp(1.0f, -127), true, E8M0Rounding::kUp), 0x00);  // exact, a float subnormal
  EXPECT_EQ(E8M0ToFloat(0x00), std::ldexp(1.0f, -127));
}

}  // namespace
}  // namespace onyx
