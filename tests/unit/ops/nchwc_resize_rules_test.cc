// Shape rules of Resize (constant scales or sizes) and of the com.onyx blocked pools and
// channel scaling, checked against sizes worked out by hand.
#include <gtest/gtest.h>

#include "model_builder.h"
#include "infer_test_util.h"
#include "onnx/model_loader.h"
#include "ops/shape_inference.h"

namespace onyx {
namespace {

using test::Infer;
using test::TypeOf;
using test::IntsAttr;
using test::IntAttr;

TEST(ResizeShapeRule, ConstantScalesAndSizes) {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {1, 16, 10, 12}).Input("y", DataType::kFloat, {-1, 8, -1, 6});
  b.Input("runtime_scales", DataType::kFloat, {4});
  for (const char* out : {"up", "sized", "sym", "unknown"}) b.Output(out, DataType::kFloat, {-1, -1, -1, -1});
  b.Initializer("scales", Tensor::FromVector<float>(DataType::kFloat, {4}, {1.0f, 1.0f, 2.0f, 2.0f}));
  b.Initializer("odd_scales", Tensor::FromVector<float>(DataType::kFloat, {4}, {1.0f, 1.0f, 2.0f, 1.5f}));
  b.Initializer("sizes", Tensor::FromVector<int64_t>(DataType::kInt64, {4}, {1, 16, 5, 7}));
  b.Node("Resize", {"x", "", "scales"}, {"up"});
  b.Node("Resize", {"x", "", "", "sizes"}, {"sized"});
  b.Node("Resize", {"y", "", "odd_scales"}, {"sym"});  // 6 * 1.5 = 9; the unknown height stays unknown
  b.Node("Resize", {"x", "", "runtime_scales"}, {"unknown"});
  const auto types = Infer(b);
  EXPECT_EQ(TypeOf(types, "up"), "tensor(float)[1,16,20,24]");
  EXPECT_EQ(TypeOf(types, "sized"), "tensor(float)[1,16,5,7]");
  EXPECT_EQ(TypeOf(types, "sym"), "tensor(float)[d0,8,?,9]");
  EXPECT_EQ(TypeOf(types, "unknown"), "tensor(float)[?,?,?,?]");
}

TEST(NchwcShapeRules, PoolsAndChannelScale) {
  test::ModelBuilder b;
  b.model().opset_imports["com.onyx"] = 1;
  b.Input("x", DataType::kFloat, {2, 3, 11, 12, 8}).Input("gate", DataType::kFloat, {2, 3, 1, 1, 8});
  for (const char* out : {"max", "avg", "gap", "gmp", "scaled"}) b.Output(out, DataType::kFloat, {-1, -1, -1, -1, -1});
  auto& max = b.Node("NchwcMaxPool", {"x"}, {"max"}, "com.onyx");
  max.attributes = {IntsAttr("kernel_shape", {3, 3}), IntsAttr("strides", {2, 2}),
                    IntsAttr("pads", {1, 1, 1, 1})};
  auto& avg = b.Node("NchwcAveragePool", {"x"}, {"avg"}, "com.onyx");
  avg.attributes = {IntsAttr("kernel_shape", {2, 2}), IntsAttr("strides", {2, 2}),
                    IntAttr("ceil_mode", 1)};
  b.Node("NchwcGlobalAveragePool", {"x"}, {"gap"}, "com.onyx");
  b.Node("NchwcGlobalMaxPool", {"x"}, {"gmp"}, "com.onyx");
  b.Node("NchwcScaleChannels", {"x", "gate"}, {"scaled"}, "com.onyx");
  const auto types = Infer(b);
  EXPECT_EQ(TypeOf(types, "max"), "tensor(float)[2,3,6,6,8]");
  EXPECT_EQ(TypeOf(types, "avg"), "tensor(float)[2,3,6,6,8]");
  EXPECT_EQ(TypeOf(types, "gap"), "tensor(float)[2,3,1,1,8]");
  EXPECT_EQ(TypeOf(types, "gmp"), "tensor(float)[2,3,1,1,8]");
  EXPECT_EQ(TypeOf(types, "scaled"), "tensor(float)[2,3,11,12,8]");
}

}  // namespace
}  // namespace onyx
