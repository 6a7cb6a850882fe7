// HalfBodyToFloat's bfloat16 mark (linalg::kBf16Attribute): products of a bfloat16 body with a
// bfloat16 constant weight keep bfloat16 precision on the bf16 GEMM; float16 bodies, products
// of two activations and float32 models are never marked; the fusions that replace a marked
// MatMul (MatMulScaleFusion, AttentionFusion) keep the mark.
#include "base/float_types.h"
#include "linalg/bf16_gemm.h"
#include "optimizer/fusion_test_util.h"

namespace onyx {
namespace {

using namespace test;

constexpr char kPass[] = "HalfBodyToFloat";

Tensor Rounded(const Tensor& t, DataType dtype) {
  if (dtype == DataType::kFloat) return t;
  Tensor out(dtype, t.shape());
  for (int64_t i = 0; i < t.size(); ++i)
    out.data<uint16_t>()[i] = dtype == DataType::kFloat16 ? FloatToHalfBits(t.data<float>()[i])
                                                          : FloatToBFloat16Bits(t.data<float>()[i]);
  return out;
}

// x (float) -> Cast(dtype) -> MatMul(W or a second input) -> [Mul(scale)] -> Cast(float) -> y.
std::string CastWrappedMatMul(DataType dtype, bool constant_weight, bool scaled = false) {
  ModelBuilder b;
  b.Input("x", DataType::kFloat, {3, 8});
  b.Node("Cast", {"x"}, {"xh"}).attributes.push_back(IntAttr("to", static_cast<int64_t>(dtype)));
  if (constant_weight) {
    b.Initializer("W", Rounded(RandomTensor({8, 5}, 1), dtype));
  } else {
    b.Input("W", dtype, {8, 5});
  }
  b.Node("MatMul", {"xh", "W"}, {"m"});
  std::string last = "m";
  if (scaled) {
    b.Initializer("s", Rounded(Tensor::FromVector<float>(DataType::kFloat, {}, {0.5f}), dtype));
    b.Node("Mul", {"m", "s"}, {"ms"});
    last = "ms";
  }
  b.Node("Cast", {last}, {"y"}).attributes.push_back(IntAttr("to", static_cast<int64_t>(DataType::kFloat)));
  b.Output("y", DataType::kFloat, {3, 5});
  return b.Bytes();
}

int64_t Mark(const ir::Node& node) {
  const ir::Attribute* a = node.FindAttribute(linalg::kBf16Attribute);
  return a == nullptr ? -1 : a->i;
}

TEST(HalfBodyBf16Mark, BFloat16MatMulWithConstantWeightIsMarked) {
  auto run = RunPasses(CastWrappedMatMul(DataType::kBFloat16, true), {kPass, "NoOpElimination"});
  auto mm = FindNode(run.optimized_bytes, "MatMul");
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(Mark(*mm), 1);
  EXPECT_EQ(run.report.passes.at(0).name, kPass);
  EXPECT_EQ(run.report.passes.at(0).counts.at("products kept in bfloat16"), 1);
}

TEST(HalfBodyBf16Mark, Float16AndFloat32AreNeverMarked) {
  for (DataType dtype : {DataType::kFloat16, DataType::kFloat}) {
    auto run = RunPasses(CastWrappedMatMul(dtype, true), {kPass, "NoOpElimination"});
    auto mm = FindNode(run.optimized_bytes, "MatMul");
    ASSERT_NE(mm, nullptr);
    EXPECT_EQ(Mark(*mm), -1) << DataTypeName(dtype);
  }
}

TEST(HalfBodyBf16Mark, ProductOfTwoActivationsIsNotMarked) {
  auto run = RunPasses(CastWrappedMatMul(DataType::kBFloat16, false), {kPass, "NoOpElimination"});
  auto mm = FindNode(run.optimized_bytes, "MatMul");
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(Mark(*mm), -1);
}

TEST(HalfBodyBf16Mark, MatMulScaleFusionKeepsTheMark) {
  auto run =
      RunPasses(CastWrappedMatMul(DataType::kBFloat16, true, true), {kPass, "NoOpElimination", "MatMulScaleFusion"});
  auto fused = FindNode(run.optimized_bytes, "FusedMatMul", "com.microsoft");
  ASSERT_NE(fused, nullptr);
  EXPECT_EQ(Mark(*fused), 1);
}

// A bfloat16 Conv with a bfloat16 weight is marked (the NCHWc kernel takes it for 1x1 convs).
TEST(HalfBodyBf16Mark, BFloat16ConvIsMarked) {
  ModelBuilder b;
  b.Input("x", DataType::kFloat, {1, 16, 4, 4});
  b.Node("Cast", {"x"}, {"xh"}).attributes.push_back(IntAttr("to", static_cast<int64_t>(DataType::kBFloat16)));
  b.Initializer("W", Rounded(RandomTensor({32, 16, 1, 1}, 3), DataType::kBFloat16));
  b.Node("Conv", {"xh", "W"}, {"c"});
  b.Node("Cast", {"c"}, {"y"}).attributes.push_back(IntAttr("to", static_cast<int64_t>(DataType::kFloat)));
  b.Output("y", DataType::kFloat, {1, 32, 4, 4});
  auto run = RunPasses(b.Bytes(), {kPass, "NoOpElimination"});
  auto conv = FindNode(run.optimized_bytes, "Conv");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(Mark(*conv), 1);
}

}  // namespace
}  // namespace onyx
