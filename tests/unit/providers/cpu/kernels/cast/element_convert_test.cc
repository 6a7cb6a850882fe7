// Element conversions checked against independent references: numpy 1.24's astype/str results
// (recorded below as literals), hand-derived IEEE roundings and the ONNX Cast rules.
#include "providers/cpu/kernels/cast/element_convert.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "onyx/error.h"

namespace onyx {
namespace {

template <typename T>
Tensor Make(DataType t, const std::vector<T>& v) {
  return Tensor::FromVector(t, {static_cast<int64_t>(v.size())}, v);
}

Tensor Convert(const Tensor& src, DataType to, ConvertOptions opts = {}) {
  Tensor dst(to, src.shape());
  ConvertTensor(src, dst, opts, nullptr);
  return dst;
}

std::vector<uint8_t> Bytes(const Tensor& t) {
  const auto* p = static_cast<const uint8_t*>(t.raw_data());
  return std::vector<uint8_t>(p, p + t.byte_size());
}

TEST(FormatFloat, MatchesNumpyStr) {
  // numpy: np.array([...], dtype=np.float32).astype(str)
  const std::vector<std::pair<float, const char*>> f32 = {
      {1e-4f, "1e-04"},           {0.00011f, "0.00011"},     {1e-5f, "1e-05"},
      {1.5e-7f, "1.5e-07"},       {1e16f, "1e+16"},          {9999999e9f, "9999999000000000.0"},
      {123456789.0f, "123456790.0"}, {1.0f, "1.0"},          {-0.0f, "-0.0"},
      {0.0f, "0.0"},              {3.4e38f, "3.4e+38"},      {1e-45f, "1e-45"},
      {0.1f, "0.1"},              {100.0f, "100.0"},         {1e15f, "1000000000000000.0"},
      {12345678.9f, "12345679.0"}, {0.039187793f, "0.039187793"}, {-2.5f, "-2.5"}};
  for (const auto& [v, text] : f32) EXPECT_EQ(FormatFloat(v, DataType::kFloat), text) << text;
  EXPECT_EQ(FormatFloat(std::numeric_limits<double>::quiet_NaN(), DataType::kFloat), "nan");
  EXPECT_EQ(FormatFloat(-std::numeric_limits<double>::infinity(), DataType::kFloat), "-inf");
  // float64
  EXPECT_EQ(FormatFloat(1.0 / 3.0, DataType::kDouble), "0.3333333333333333");
  EXPECT_EQ(FormatFloat(std::ldexp(1.0, 60), DataType::kDouble), "1.152921504606847e+18");
  EXPECT_EQ(FormatFloat(5e-324, DataType::kDouble), "5e-324");
  // float16: shortest digits that read back to the same half.
  auto half = [](float f) { return static_cast<double>(HalfBitsToFloat(FloatToHalfBits(f))); };
  EXPECT_EQ(FormatFloat(half(0.1f), DataType::kFloat16), "0.1");
  EXPECT_EQ(FormatFloat(half(65504.0f), DataType::kFloat16), "65500.0");
  EXPECT_EQ(FormatFloat(half(6e-8f), DataType::kFloat16), "6e-08");
  EXPECT_EQ(FormatFloat(half(1.0f / 3.0f), DataType::kFloat16), "0.3333");
  EXPECT_EQ(FormatFloat(half(0.0001f), DataType::kFloat16), "0.0001");
}

TEST(ParseDouble, AcceptsOnnxLiteralsIndependentOfLocale) {
  double d = 0;
  ASSERT_TRUE(ParseDouble(" 1.5", &d));
  EXPECT_EQ(d, 1.5);
  ASSERT_TRUE(ParseDouble("1E8", &d));
  EXPECT_EQ(d, 1e8);
  ASSERT_TRUE(ParseDouble("-1e-5", &d));
  EXPECT_EQ(d, -1e-5);
  ASSERT_TRUE(ParseDouble("1e400", &d));
  EXPECT_EQ(d, std::numeric_limits<double>::infinity());
  ASSERT_TRUE(ParseDouble("-1e400", &d));
  EXPECT_EQ(d, -std::numeric_limits<double>::infinity());
  ASSERT_TRUE(ParseDouble("1e-400", &d));
  EXPECT_EQ(d, 0.0);
  for (const char* s : {"INF", "+INF", "inf", "Infinity"}) {
    ASSERT_TRUE(ParseDouble(s, &d)) << s;
    EXPECT_EQ(d, std::numeric_limits<double>::infinity()) << s;
  }
  ASSERT_TRUE(ParseDouble("-INF", &d));
  EXPECT_EQ(d, -std::numeric_limits<double>::infinity());
  ASSERT_TRUE(ParseDouble("NaN", &d));
  EXPECT_TRUE(std::isnan(d));
  for (const char* s : {"", "abc", "1.5x", "0x10", "--1", "nan(1)", "1e"}) EXPECT_FALSE(ParseDouble(s, &d)) << s;
  float f = 0;
  ASSERT_TRUE(ParseFloat("0.47892547", &f));
  EXPECT_EQ(f, 0.47892547f);
}

TEST(ConvertTensor, FloatToIntegerTruncatesThenWraps) {
  // numpy: np.array([1.5, -2.7, 300, -300], np.float32).astype(np.int8) -> [1, -2, 44, -44]
  const Tensor y = Convert(Make<float>(DataType::kFloat, {1.5f, -2.7f, 300.0f, -300.0f}), DataType::kInt8);
  EXPECT_EQ(Bytes(y), (std::vector<uint8_t>{1, 0xFE, 44, static_cast<uint8_t>(-44)}));
  // Integers keep their low bits: 200 (int16) -> -56 (int8), the example of ONNX's Cast.
  const Tensor z = Convert(Make<int16_t>(DataType::kInt16, {200, -1}), DataType::kInt8);
  EXPECT_EQ(Bytes(z), (std::vector<uint8_t>{static_cast<uint8_t>(-56), 0xFF}));
  // Negative floats into unsigned types wrap as a C cast through int64 does.
  const Tensor u = Convert(Make<double>(DataType::kDouble, {-1.0, 3e9}), DataType::kUInt32);
  EXPECT_EQ(u.data<uint32_t>()[0], 0xFFFFFFFFu);
  EXPECT_EQ(u.data<uint32_t>()[1], 3000000000u);
}

TEST(ConvertTensor, PackedTypesLowBitsFirst) {
  // Five int4 values take three bytes; the unused high nibble of the last is zero.
  const Tensor q = Convert(Make<float>(DataType::kFloat, {-9, -8, 7, 8, 1}), DataType::kInt4);
  EXPECT_EQ(Bytes(q), (std::vector<uint8_t>{0x87, 0x87, 0x01}));
  const Tensor back = Convert(q, DataType::kInt8);
  EXPECT_EQ(Bytes(back), (std::vector<uint8_t>{7, 0xF8, 7, 0xF8, 1}));
  const Tensor u2 = Convert(Make<int32_t>(DataType::kInt32, {-3, -2, -1, 0, 1, 2}), DataType::kUInt2);
  EXPECT_EQ(Bytes(u2), (std::vector<uint8_t>{0x39, 0x09}));
  const Tensor i2 = Convert(u2, DataType::kFloat);  // uint2 reads unsigned
  EXPECT_EQ(i2.data<float>()[0], 1.0f);
  EXPECT_EQ(i2.data<float>()[2], 3.0f);
}

TEST(ConvertTensor, DoubleAndInt64SourcesRoundOnce) {
  // 1 + 2^-11 + 2^-40 lies just above the float16 tie 1 + 2^-11: it must round up (0x3C01);
  // going through float first would land on the tie and round to even (0x3C00). numpy's
  // np.float64(...).astype(np.float16) gives 0x3C01.
  const Tensor h = Convert(Make<double>(DataType::kDouble, {1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)}),
                           DataType::kFloat16);
  EXPECT_EQ(h.data<uint16_t>()[0], 0x3C01);
  const Tensor h2 = Convert(Make<int64_t>(DataType::kInt64, {65519, 65520, -70000}), DataType::kFloat16);
  EXPECT_EQ(h2.data<uint16_t>()[0], 0x7BFF);  // 65504
  EXPECT_EQ(h2.data<uint16_t>()[1], 0x7C00);  // tie with 65536: Inf
  EXPECT_EQ(h2.data<uint16_t>()[2], 0xFC00);
  // 2^40 + 2^32 + 1 is just above a bfloat16 tie; int64 -> float -> bfloat16 would hit the tie.
  const Tensor b = Convert(Make<int64_t>(DataType::kInt64, {(int64_t{1} << 40) + (int64_t{1} << 32) + 1}),
                           DataType::kBFloat16);
  EXPECT_EQ(b.data<uint16_t>()[0], 0x5381);  // 2^40 * (1 + 2^-7 + tiny) rounds up from the tie
  const Tensor f = Convert(Make<uint64_t>(DataType::kUInt64, {std::numeric_limits<uint64_t>::max()}), DataType::kFloat);
  EXPECT_EQ(f.data<float>()[0], 18446744073709551616.0f);
}

TEST(ConvertTensor, Float8AndE8M0FollowTheOptions) {
  const Tensor x = Make<float>(DataType::kFloat, {1e6f, 3.0f, -0.0f});
  EXPECT_EQ(Bytes(Convert(x, DataType::kFloat8E4M3FN)), (std::vector<uint8_t>{0x7E, 0x44, 0x80}));
  EXPECT_EQ(Bytes(Convert(x, DataType::kFloat8E4M3FN, {false, E8M0Rounding::kUp})),
            (std::vector<uint8_t>{0x7F, 0x44, 0x80}));
  const Tensor e = Make<float>(DataType::kFloat, {3.0f, 0.124f});
  EXPECT_EQ(Bytes(Convert(e, DataType::kFloat8E8M0, {true, E8M0Rounding::kUp})), (std::vector<uint8_t>{129, 0x7C}));
  EXPECT_EQ(Bytes(Convert(e, DataType::kFloat8E8M0, {true, E8M0Rounding::kDown})), (std::vector<uint8_t>{128, 0x7B}));
  EXPECT_EQ(Bytes(Convert(e, DataType::kFloat8E8M0, {true, E8M0Rounding::kNearest})), (std::vector<uint8_t>{129, 0x7C}));
}

TEST(ConvertTensor, Strings) {
  Tensor s(DataType::kString, {5});
  const char* texts[] = {"100.5", "-3", "+7", "1e3", " 42 "};
  for (int i = 0; i < 5; ++i) s.data<std::string>()[i] = texts[i];
  const Tensor i32 = Convert(s, DataType::kInt32);
  EXPECT_EQ(std::vector<int32_t>(i32.data<int32_t>(), i32.data<int32_t>() + 5), (std::vector<int32_t>{100, -3, 7, 1000, 42}));
  const Tensor f = Convert(s, DataType::kFloat);
  EXPECT_EQ(f.data<float>()[0], 100.5f);

  Tensor b(DataType::kString, {3});
  b.data<std::string>()[0] = "true";
  b.data<std::string>()[1] = "0";
  b.data<std::string>()[2] = "2.5";
  EXPECT_EQ(Bytes(Convert(b, DataType::kBool)), (std::vector<uint8_t>{1, 0, 1}));

  Tensor bad(DataType::kString, {2});
  bad.data<std::string>()[0] = "1";
  bad.data<std::string>()[1] = "Hello World!";
  EXPECT_THROW(Convert(bad, DataType::kFloat), Error);

  const Tensor text = Convert(Make<int8_t>(DataType::kInt8, {-5, 7}), DataType::kString);
  EXPECT_EQ(text.data<std::string>()[0], "-5");
  EXPECT_EQ(text.data<std::string>()[1], "7");
  Tensor flags(DataType::kBool, {2});
  flags.data<uint8_t>()[0] = 1;
  flags.data<uint8_t>()[1] = 0;
  const Tensor words = Convert(flags, DataType::kString);
  EXPECT_EQ(words.data<std::string>()[0], "True");  // numpy's astype(str)
  EXPECT_EQ(words.data<std::string>()[1], "False");
}

TEST(RoundToType, RoundsToNearestEven) {
  EXPECT_EQ(RoundToType(1.0 + std::ldexp(1.0, -11), DataType::kFloat16), 1.0);
  EXPECT_EQ(RoundToType(1.0 + 3 * std::ldexp(1.0, -11), DataType::kFloat16), 1.0 + std::ldexp(1.0, -9));
  EXPECT_EQ(RoundToType(1.0 + std::ldexp(1.0, -30), DataType::kFloat), 1.0);
  EXPECT_EQ(RoundToType(1.0 + std::ldexp(1.0, -30), DataType::kDouble), 1.0 + std::ldexp(1.0, -30));
}

}  // namespace
}  // namespace onyx
