// Static shapes of QuantizeLinear / DequantizeLinear and of QLinearConv in both domains,
// com.microsoft's channels_last included (src/ops/infer/nn_rules.cc): what QdqNhwcLayout reads.
#include <gtest/gtest.h>

// GCC 12 reports a -Wrestrict false positive in std::string inlined from ModelBuilder::Type.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wrestrict"
#include "model_builder.h"
#include "infer_test_util.h"
#pragma GCC diagnostic pop
#include "onnx/model_loader.h"
#include "ops/shape_inference.h"

namespace onyx {
namespace {

using test::Infer;
using test::TypeOf;

void IntAttr(ir::Node& n, const std::string& name, int64_t v) {
  n.attributes.push_back({name, ir::AttrType::kInt});
  n.attributes.back().i = v;
}

void IntsAttr(ir::Node& n, const std::string& name, std::vector<int64_t> v) {
  n.attributes.push_back({name, ir::AttrType::kInts});
  n.attributes.back().ints = std::move(v);
}

TEST(QuantConvRules, QuantizeDequantizeKeepDims) {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {-1, 3, 8, 8});
  b.Initializer("s", Tensor::FromVector<float>(DataType::kFloat, {}, {0.1f}));
  b.Initializer("z8", Tensor::FromVector<int8_t>(DataType::kInt8, {}, {1}));
  b.Output("y", DataType::kFloat, {-1, 3, 8, 8});
  b.Node("QuantizeLinear", {"x", "s", "z8"}, {"q8"});
  b.Node("QuantizeLinear", {"x", "s"}, {"qu"});
  b.Node("DequantizeLinear", {"q8", "s", "z8"}, {"y"});
  const auto types = Infer(b);
  EXPECT_EQ(TypeOf(types, "q8"), "tensor(int8)[d0,3,8,8]");
  EXPECT_EQ(TypeOf(types, "qu"), "tensor(uint8)[d0,3,8,8]");  // no zero point: uint8
  EXPECT_EQ(TypeOf(types, "y"), "tensor(float)[d0,3,8,8]");
}

TEST(QuantConvRules, QLinearConvNchwAndChannelsLast) {
  test::ModelBuilder b;
  b.model().opset_imports["com.microsoft"] = 1;
  b.Input("x", DataType::kUInt8, {-1, 8, 9, 11}).Input("xl", DataType::kUInt8, {-1, 9, 11, 8});
  b.Initializer("s", Tensor::FromVector<float>(DataType::kFloat, {}, {0.1f}));
  b.Initializer("zu", Tensor::FromVector<uint8_t>(DataType::kUInt8, {}, {3}));
  b.Initializer("zs", Tensor::FromVector<int8_t>(DataType::kInt8, {}, {0}));
  b.Initializer("w", Tensor::FromVector<int8_t>(DataType::kInt8, {16, 8, 3, 3}, std::vector<int8_t>(16 * 8 * 9, 1)));
  b.Output("y", DataType::kUInt8, {});
  auto& plain = b.Node("QLinearConv", {"x", "s", "zu", "w", "s", "zs", "s", "zu"}, {"y"});
  IntsAttr(plain, "strides", {2, 2});
  IntsAttr(plain, "pads", {1, 1, 1, 1});
  auto& last = b.Node("QLinearConv", {"xl", "s", "zu", "w", "s", "zs", "s", "zs"}, {"yl"}, "com.microsoft");
  IntAttr(last, "channels_last", 1);
  IntsAttr(last, "strides", {2, 2});
  IntsAttr(last, "pads", {1, 1, 1, 1});
  const auto types = Infer(b);
  EXPECT_EQ(TypeOf(types, "y"), "tensor(uint8)[d0,16,5,6]");
  EXPECT_EQ(TypeOf(types, "yl"), "tensor(int8)[d0,5,6,16]");  // y_zero_point's type, [N, H, W, M]
}

}  // namespace
}  // namespace onyx
