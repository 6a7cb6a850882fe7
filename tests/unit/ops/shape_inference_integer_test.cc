// Shape rules of the integer ops that quantize_dynamic and QOperator exports use: a fusion that
// needs a value's dims (the dynamic conv's residual Add) must get them without the model's
// value_info.
#include <gtest/gtest.h>

#include "infer_test_util.h"
#include "model_builder.h"
#include "ops/shape_inference.h"

namespace onyx {
namespace {

using test::Infer;
using test::TypeOf;

TEST(ShapeInferenceInteger, DynamicQuantizeLinearThenConvInteger) {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {-1, 8, 20, 20}).Output("out", DataType::kInt32, {-1, 4, 9, 9});
  b.Initializer("w", Tensor::FromVector<int8_t>(DataType::kInt8, {4, 8, 3, 3}, std::vector<int8_t>(4 * 8 * 9, 1)));
  b.Node("DynamicQuantizeLinear", {"x"}, {"q", "scale", "zero"});
  auto& conv = b.Node("ConvInteger", {"q", "w", "zero"}, {"c"});
  conv.attributes.push_back({"strides", ir::AttrType::kInts});
  conv.attributes.back().ints = {2, 2};
  b.Node("Identity", {"c"}, {"out"});
  const auto types = Infer(b);
  EXPECT_EQ(TypeOf(types, "q"), "tensor(uint8)[d0,8,20,20]");
  EXPECT_EQ(TypeOf(types, "scale"), "tensor(float)[]");
  EXPECT_EQ(TypeOf(types, "zero"), "tensor(uint8)[]");
  EXPECT_EQ(TypeOf(types, "c"), "tensor(int32)[d0,4,9,9]");
}

TEST(ShapeInferenceInteger, MatMulIntegerAndQLinearMatMul) {
  test::ModelBuilder b;
  b.Input("a", DataType::kUInt8, {2, 5, 16}).Output("p_out", DataType::kInt32, {2, 5, 3});
  b.Output("y_out", DataType::kInt8, {2, 5, 3});
  b.Initializer("b", Tensor::FromVector<int8_t>(DataType::kInt8, {16, 3}, std::vector<int8_t>(48, 1)));
  b.Initializer("s", Tensor::FromVector<float>(DataType::kFloat, {}, {0.5f}));
  b.Initializer("za", Tensor::FromVector<uint8_t>(DataType::kUInt8, {}, {128}));
  b.Initializer("zb", Tensor::FromVector<int8_t>(DataType::kInt8, {}, {0}));
  b.Node("MatMulInteger", {"a", "b"}, {"p"});
  b.Node("QLinearMatMul", {"a", "s", "za", "b", "s", "zb", "s", "zb"}, {"y"});
  b.Node("Identity", {"p"}, {"p_out"});
  b.Node("Identity", {"y"}, {"y_out"});
  const auto types = Infer(b);
  EXPECT_EQ(TypeOf(types, "p"), "tensor(int32)[2,5,3]");
  EXPECT_EQ(TypeOf(types, "y"), "tensor(int8)[2,5,3]");
}

}  // namespace
}  // namespace onyx
