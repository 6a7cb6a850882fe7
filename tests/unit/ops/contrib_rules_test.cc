// Static type/shape inference of the com.microsoft contrib ops (src/ops/infer/contrib_rules.cc).
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

constexpr const char* kMs = "com.microsoft";

test::ModelBuilder Builder() {
  test::ModelBuilder b;
  b.model().opset_imports[kMs] = 1;
  return b;
}

void IntAttr(ir::Node& n, const std::string& name, int64_t v) {
  n.attributes.push_back({name, ir::AttrType::kInt});
  n.attributes.back().i = v;
}

void IntsAttr(ir::Node& n, const std::string& name, std::vector<int64_t> v) {
  n.attributes.push_back({name, ir::AttrType::kInts});
  n.attributes.back().ints = std::move(v);
}

TEST(ContribRules, GroupQueryAttentionWithCacheAndPackedQkv) {
  auto b = Builder();
  b.Input("q", DataType::kFloat16, {-1, 1, 128}).Input("k", DataType::kFloat16, {-1, 1, 32});
  b.Input("v", DataType::kFloat16, {-1, 1, 32}).Input("pk", DataType::kFloat16, {-1, 2, 64, 16});
  b.Input("pv", DataType::kFloat16, {-1, 2, 64, 16}).Input("sl", DataType::kInt32, {-1});
  b.Input("qkv", DataType::kFloat, {2, 5, 192});
  b.Initializer("total", Tensor::FromVector<int32_t>(DataType::kInt32, {1}, {70}));
  b.Initializer("total5", Tensor::FromVector<int32_t>(DataType::kInt32, {1}, {5}));
  b.Output("y", DataType::kFloat16, {-1, 1, 128});
  auto& g = b.Node("GroupQueryAttention", {"q", "k", "v", "pk", "pv", "sl", "total"}, {"o", "pko", "pvo"}, kMs);
  IntAttr(g, "num_heads", 8);
  IntAttr(g, "kv_num_heads", 2);
  auto& p = b.Node("GroupQueryAttention", {"qkv", "", "", "", "", "sl", "total5"}, {"po", "ppk", "ppv"}, kMs);
  IntAttr(p, "num_heads", 8);
  IntAttr(p, "kv_num_heads", 2);
  b.Node("Identity", {"o"}, {"y"});
  const auto types = Infer(b);
  EXPECT_EQ(TypeOf(types, "o"), "tensor(float16)[d0,1,128]");
  EXPECT_EQ(TypeOf(types, "pko"), "tensor(float16)[d0,2,70,16]");
  EXPECT_EQ(TypeOf(types, "po"), "tensor(float)[2,5,128]");
  EXPECT_EQ(TypeOf(types, "ppv"), "tensor(float)[2,2,5,16]");
}

TEST(ContribRules, EmbedLayerNormAndMatMulNBits) {
  auto b = Builder();
  b.Input("ids", DataType::kInt32, {-1, 128}).Input("a", DataType::kFloat, {-1, 7, 256});
  b.Initializer("word", test::FloatTensor({100, 768})).Initializer("pos", test::FloatTensor({512, 768}));
  b.Initializer("g", test::FloatTensor({768})).Initializer("bt", test::FloatTensor({768}));
  b.Output("y", DataType::kFloat, {-1, 128, 768});
  b.Node("EmbedLayerNormalization", {"ids", "", "word", "pos", "", "g", "bt"}, {"e", "mi", "es"}, kMs);
  b.Initializer("bq", Tensor::Zeros(DataType::kUInt8, {100, 8, 16}));
  b.Initializer("sc", test::FloatTensor({100 * 8}));
  auto& m = b.Node("MatMulNBits", {"a", "bq", "sc"}, {"mm"}, kMs);
  IntAttr(m, "K", 256);
  IntAttr(m, "N", 100);
  b.Node("Identity", {"e"}, {"y"});
  const auto types = Infer(b);
  EXPECT_EQ(TypeOf(types, "e"), "tensor(float)[d0,128,768]");
  EXPECT_EQ(TypeOf(types, "mi"), "tensor(int32)[d0]");
  EXPECT_EQ(TypeOf(types, "es"), "tensor(float)[d0,128,768]");
  EXPECT_EQ(TypeOf(types, "mm"), "tensor(float)[d0,7,100]");
}

TEST(ContribRules, IntegerMatMulsAndQGemm) {
  auto b = Builder();
  b.Input("a", DataType::kFloat, {-1, 16, 64}).Input("qa", DataType::kUInt8, {8, 32});
  b.Initializer("w", Tensor::Zeros(DataType::kInt8, {64, 10})).Initializer("qw", Tensor::Zeros(DataType::kInt8, {10, 32}));
  b.Initializer("qw2", Tensor::Zeros(DataType::kInt8, {32, 10}));
  b.Input("s", DataType::kFloat, {}).Input("yz", DataType::kUInt8, {});
  b.Output("y", DataType::kFloat, {-1, 16, 10});
  b.Node("DynamicQuantizeMatMul", {"a", "w", "s"}, {"d"}, kMs);
  b.Node("MatMulIntegerToFloat", {"qa", "qw2", "s", "s"}, {"mi"}, kMs);
  auto& q = b.Node("QGemm", {"qa", "s", "yz", "qw", "s", "yz", "", "s", "yz"}, {"qg"}, kMs);
  IntAttr(q, "transB", 1);
  auto& f = b.Node("QGemm", {"qa", "s", "yz", "qw", "s", "yz"}, {"qf"}, kMs);
  IntAttr(f, "transB", 1);
  b.Initializer("wf", test::FloatTensor({64, 10}));
  auto& t = b.Node("TransposeMatMul", {"wf", "a"}, {"tm"}, kMs);
  IntAttr(t, "transA", 1);
  IntAttr(t, "transB", 1);
  b.Node("Identity", {"d"}, {"y"});
  const auto types = Infer(b);
  EXPECT_EQ(TypeOf(types, "d"), "tensor(float)[d0,16,10]");
  EXPECT_EQ(TypeOf(types, "mi"), "tensor(float)[8,10]");
  EXPECT_EQ(TypeOf(types, "qg"), "tensor(uint8)[8,10]");
  EXPECT_EQ(TypeOf(types, "qf"), "tensor(float)[8,10]");
  EXPECT_EQ(TypeOf(types, "tm"), "tensor(float)[d0,10,16]");
}

TEST(ContribRules, QLinearOps) {
  auto b = Builder();
  b.Input("x", DataType::kUInt8, {-1, 3, 9, 10}).Input("x2", DataType::kUInt8, {-1, 5, 9, 10});
  b.Input("h", DataType::kInt8, {-1, 9, 10, 3}).Input("s", DataType::kFloat, {}).Input("z", DataType::kUInt8, {});
  b.Input("row", DataType::kUInt8, {10}).Input("mask", DataType::kBool, {9, 1});
  b.Output("y", DataType::kUInt8, {-1, 3, 9, 10});
  b.Node("QLinearWhere", {"mask", "x", "s", "z", "row", "s", "z", "s", "z"}, {"where"}, kMs);
  b.Node("QLinearAdd", {"x", "s", "z", "row", "s", "z", "s", "z"}, {"add"}, kMs);
  b.Node("QLinearSigmoid", {"x", "s", "z", "s", "z"}, {"sig"}, kMs);
  auto& c = b.Node("QLinearConcat", {"s", "z", "x", "s", "z", "x2", "s", "z"}, {"cat"}, kMs);
  IntAttr(c, "axis", 1);
  auto& p = b.Node("QLinearAveragePool", {"x", "s", "z", "s", "z"}, {"pool"}, kMs);
  IntsAttr(p, "kernel_shape", {3, 3});
  IntsAttr(p, "strides", {2, 2});
  IntsAttr(p, "pads", {1, 1, 1, 1});
  auto& pl = b.Node("QLinearAveragePool", {"h", "s", "", "s"}, {"pool_nhwc"}, kMs);
  IntsAttr(pl, "kernel_shape", {2, 2});
  IntAttr(pl, "channels_last", 1);
  auto& g = b.Node("QLinearGlobalAveragePool", {"h", "s", "", "s", ""}, {"gap"}, kMs);
  IntAttr(g, "channels_last", 1);
  b.Node("Identity", {"add"}, {"y"});
  const auto types = Infer(b);
  EXPECT_EQ(TypeOf(types, "add"), "tensor(uint8)[d0,3,9,10]");
  EXPECT_EQ(TypeOf(types, "sig"), "tensor(uint8)[d0,3,9,10]");
  EXPECT_EQ(TypeOf(types, "where"), "tensor(uint8)[d0,3,9,10]");
  EXPECT_EQ(TypeOf(types, "cat"), "tensor(uint8)[d0,8,9,10]");
  EXPECT_EQ(TypeOf(types, "pool"), "tensor(uint8)[d0,3,5,5]");
  EXPECT_EQ(TypeOf(types, "pool_nhwc"), "tensor(int8)[d0,8,9,3]");
  EXPECT_EQ(TypeOf(types, "gap"), "tensor(int8)[d0,1,1,3]");
}

TEST(ContribRules, SimplifiedLayerNormalizationInvStdDev) {
  auto b = Builder();
  b.Input("x", DataType::kFloat16, {-1, 7, 64}).Output("y", DataType::kFloat16, {-1, 7, 64});
  b.Initializer("scale", Tensor::Zeros(DataType::kFloat16, {64}));
  b.Node("SimplifiedLayerNormalization", {"x", "scale"}, {"n", "inv"});
  b.Node("Identity", {"n"}, {"y"});
  const auto types = Infer(b);
  EXPECT_EQ(TypeOf(types, "n"), "tensor(float16)[d0,7,64]");
  EXPECT_EQ(TypeOf(types, "inv"), "tensor(float)[d0,7,1]");
}

}  // namespace
}  // namespace onyx
