// The float copy HalfBodyToFloat makes of a float16 or bfloat16 weight at creation (a branch-free
// conversion the compiler vectorizes, instead of a call per value) is exact: every 16-bit pattern
// against the scalar conversion in base/float_types, signaling NaNs kept as they are.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "base/float_types.h"
#include "optimizer/pass_test_util.h"
#include "optimizer/passes/half_widen.h"
#include "runtime/page_flags.h"

namespace onyx {
namespace {

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

TEST(HalfWiden, EveryBitPatternMatchesTheScalarConversion) {
  for (DataType dt : {DataType::kFloat16, DataType::kBFloat16}) {
    Tensor half(dt, {3, 65536});  // every pattern at three offsets of the vector loop
    auto* bits = static_cast<uint16_t*>(half.raw_data());
    for (int64_t i = 0; i < half.size(); ++i) bits[i] = static_cast<uint16_t>(i + i / 65536);
    const Tensor wide = WidenHalfToFloat(half);
    ASSERT_EQ(wide.dtype(), DataType::kFloat);
    ASSERT_EQ(wide.shape(), half.shape());
    const float* got = wide.data<float>();
    int wrong = 0;
    for (int64_t i = 0; i < half.size(); ++i) {
      const float want = dt == DataType::kFloat16 ? HalfBitsToFloat(bits[i]) : BFloat16BitsToFloat(bits[i]);
      if (Bits(got[i]) != Bits(want) && wrong++ < 5)
        ADD_FAILURE() << DataTypeName(dt) << " bits 0x" << std::hex << bits[i] << ": got 0x" << Bits(got[i])
                      << ", want 0x" << Bits(want);
    }
    EXPECT_EQ(wrong, 0) << DataTypeName(dt);
  }
}

TEST(HalfWiden, AFloat16BodysMatMulWeightIsWidenedExactly) {
  constexpr int64_t kK = 64, kN = 48;
  Tensor w16(DataType::kFloat16, {kK, kN});
  auto* bits = static_cast<uint16_t*>(w16.raw_data());
  for (int64_t i = 0; i < w16.size(); ++i) bits[i] = FloatToHalfBits(static_cast<float>(i % 97 - 48) / 4096.0f);
  bits[0] = 0x0001;  // the least subnormal
  bits[1] = 0xFBFF;  // -65504
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {2, kK}).Output("y", DataType::kFloat, {2, kN});
  b.Initializer("w", w16);
  b.Node("Cast", {"x"}, {"xh"}).attributes.push_back(test::IntAttr("to", static_cast<int64_t>(DataType::kFloat16)));
  b.Node("MatMul", {"xh", "w"}, {"yh"});
  b.Node("Cast", {"yh"}, {"y"}).attributes.push_back(test::IntAttr("to", static_cast<int64_t>(DataType::kFloat)));
  const std::string bytes = b.Bytes();

  auto model = LoadModelFromBytes(bytes.data(), bytes.size());
  OptimizerOptions options;
  options.level = OptLevel::kBasic;
  options.only_passes = {"HalfBodyToFloat"};
  OptimizeModel(*model, options);
  const Tensor* wide = nullptr;
  for (const auto& [name, t] : model->graph->initializers)
    if (t.dtype() == DataType::kFloat && t.size() == kK * kN) wide = &t;
  ASSERT_NE(wide, nullptr) << "the float16 weight was not widened";
  for (int64_t i = 0; i < wide->size(); ++i) ASSERT_EQ(wide->data<float>()[i], HalfBitsToFloat(bits[i])) << i;
  EXPECT_EQ(wide->data<float>()[0], 0x1.0p-24f);
  EXPECT_EQ(wide->data<float>()[1], -65504.0f);
}

#if defined(__linux__)
using test::VmFlagsOf;

// A float16 weight only MatMul reads is widened onto small pages (its kernel packs it and drops
// the copy: a fresh huge page costs a VM a host fault for all 2 MB); one another op reads stays
// on the default pages.
TEST(HalfWiden, AMatMulOnlyWeightGoesOnSmallPages) {
  constexpr int64_t kK = 1024, kN = 1024;  // 4 MB widened: a mapping of its own on small pages
  Tensor w16(DataType::kFloat16, {kK, kN});
  Tensor b16(DataType::kFloat16, {kK, kN});
  std::memset(w16.raw_data(), 0, w16.byte_size());
  std::memset(b16.raw_data(), 0, b16.byte_size());
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {kK, kK}).Output("y", DataType::kFloat, {kK, kN});
  b.Initializer("w", w16).Initializer("bias", b16);
  b.Node("Cast", {"x"}, {"xh"}).attributes.push_back(test::IntAttr("to", static_cast<int64_t>(DataType::kFloat16)));
  b.Node("MatMul", {"xh", "w"}, {"m"});
  b.Node("Add", {"m", "bias"}, {"yh"});
  b.Node("Cast", {"yh"}, {"y"}).attributes.push_back(test::IntAttr("to", static_cast<int64_t>(DataType::kFloat)));
  const std::string bytes = b.Bytes();
  auto model = LoadModelFromBytes(bytes.data(), bytes.size());
  OptimizerOptions options;
  options.level = OptLevel::kBasic;
  options.only_passes = {"HalfBodyToFloat"};
  OptimizeModel(*model, options);
  const Tensor* weight = model->graph->FindInitializer("w_float");
  const Tensor* bias = model->graph->FindInitializer("bias_float");
  ASSERT_NE(weight, nullptr);
  ASSERT_NE(bias, nullptr);
  ASSERT_EQ(weight->dtype(), DataType::kFloat);
  const std::string weight_flags = VmFlagsOf(weight->raw_data()), bias_flags = VmFlagsOf(bias->raw_data());
  ASSERT_FALSE(weight_flags.empty());
  EXPECT_NE(weight_flags.find(" nh"), std::string::npos) << weight_flags;  // MADV_NOHUGEPAGE
  EXPECT_EQ(bias_flags.find(" nh"), std::string::npos) << bias_flags;
}
#endif

}  // namespace
}  // namespace onyx
