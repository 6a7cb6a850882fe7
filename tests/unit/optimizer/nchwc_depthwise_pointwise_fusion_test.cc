// NchwcDepthwisePointwiseFusion: a blocked depthwise conv read only by a blocked 1x1 conv on a
// map of at least 56 x 56 becomes one NchwcDepthwisePointwiseConv that computes what the two
// convs compute; every other case is left alone. NchwcExpandDepthwisePointwiseFusion then takes
// the expanding 1x1 conv in front into it when the fused node is its only reader.
#include "optimizer/fusion_test_util.h"

namespace onyx {
namespace {

using namespace test;

const std::string kFused = "com.onyx.NchwcDepthwisePointwiseConv";
const std::string kNchwcConv = "com.onyx.NchwcConv";

struct Variant {
  int64_t size = 56;        // the input map
  int64_t channels = 12;    // x's (and the projection's)
  int64_t pw_stride = 1;    // the 1x1's stride
  bool dw_residual = false;  // the depthwise adds a residual Z
  bool dw_read_elsewhere = false;
  bool pw_residual = true;
  bool e_read_elsewhere = false;  // the expand's output is a graph output too
  bool e_residual = false;        // the expand adds a residual Z
  bool stem = false;  // a 1x1 conv in front, so that the expand reads a blocked map (not the plain input)
};

// x [1, C, size, size] -> expand 1x1 C->20 (Relu) -> depthwise 3x3 20 (Clip 0..6, stride 1)
// -> project 1x1 20->C (+ x when pw_residual); C = channels.
ModelBuilder Block(const Variant& v) {
  ModelBuilder b;
  b.model().opset_imports["com.microsoft"] = 1;
  const int64_t c = v.channels;
  b.Input("x", DataType::kFloat, {1, c, v.size, v.size});
  b.Initializer("We", RandomTensor({20, c, 1, 1}, 1)).Initializer("Be", RandomTensor({20}, 2));
  b.Initializer("Wd", RandomTensor({20, 1, 3, 3}, 3)).Initializer("Bd", RandomTensor({20}, 4));
  b.Initializer("Wp", RandomTensor({c, 20, 1, 1}, 5)).Initializer("Bp", RandomTensor({c}, 6));
  b.Initializer("Ze", RandomTensor({1, 20, v.size, v.size}, 7));
  const std::string in = v.stem ? "s" : "x";
  if (v.stem) {
    b.Initializer("Ws", RandomTensor({c, c, 1, 1}, 8));
    b.Node("FusedConv", {"x", "Ws"}, {"s"}, "com.microsoft").attributes = {StringAttr("activation", "Relu")};
  }
  std::vector<std::string> e_inputs = {in, "We", "Be"};
  if (v.e_residual) e_inputs.push_back("Ze");
  auto& e = b.Node("FusedConv", e_inputs, {"e"}, "com.microsoft");
  e.attributes = {StringAttr("activation", "Relu")};
  std::vector<std::string> dw_inputs = {"e", "Wd", "Bd"};
  if (v.dw_residual) dw_inputs.push_back("e");
  auto& d = b.Node("FusedConv", dw_inputs, {"d"}, "com.microsoft");
  ir::Attribute clip{"activation_params", ir::AttrType::kFloats};
  clip.floats = {0.0f, 6.0f};
  d.attributes = {IntsAttr("pads", {1, 1, 1, 1}), IntAttr("group", 20), StringAttr("activation", "Clip"), clip};
  std::vector<std::string> pw_inputs = {"d", "Wp", "Bp"};
  if (v.pw_residual && v.pw_stride == 1) pw_inputs.push_back(in);
  auto& p = b.Node("FusedConv", pw_inputs, {"y"}, "com.microsoft");
  p.attributes = {IntsAttr("strides", {v.pw_stride, v.pw_stride})};
  const int64_t out = (v.size - 1) / v.pw_stride + 1;
  b.Output("y", DataType::kFloat, {1, c, out, out});
  if (v.e_read_elsewhere) {
    b.Node("Sigmoid", {"e"}, {"e_side"});
    b.Output("e_side", DataType::kFloat, {1, 20, v.size, v.size});
  }
  if (v.dw_read_elsewhere) {
    b.Node("Sigmoid", {"d"}, {"side"});
    b.Output("side", DataType::kFloat, {1, 20, v.size, v.size});
  }
  return b;
}

PassRun Fuse(const std::string& bytes) {
  return RunPasses(bytes, {"NchwcLayout", "NchwcDepthwisePointwiseFusion"}, OptLevel::kAll, {"CPU"},
                   /*require_kernels=*/true);
}

PassRun FuseWithExpand(const std::string& bytes) {
  return RunPasses(bytes, {"NchwcLayout", "NchwcDepthwisePointwiseFusion", "NchwcExpandDepthwisePointwiseFusion"},
                   OptLevel::kAll, {"CPU"}, /*require_kernels=*/true);
}

void ExpectSameOutputs(const std::string& original, const std::string& optimized, int64_t size, int64_t channels = 12) {
  SessionOptions plain;
  plain.graph_optimization_level = GraphOptimizationLevel::kDisabled;
  Session a(original.data(), original.size(), plain);
  Session b(optimized.data(), optimized.size(), plain);
  const NamedValues feeds = {{"x", RandomTensor({1, channels, size, size}, 21, -2.0f, 2.0f)}};
  const auto expected = a.Run(feeds);
  const auto got = b.Run(feeds);
  ASSERT_EQ(expected.size(), got.size());
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_EQ(testing::CompareValues(expected[i], got[i], {1e-3, 1e-4}), "") << "output " << i;
}

TEST(NchwcDepthwisePointwiseFusion, FusesTheDepthwiseIntoTheProjection) {
  const std::string bytes = Block({}).Bytes();
  auto run = Fuse(bytes);
  EXPECT_EQ(OpCount(run.ops_after, kFused), 1);
  EXPECT_EQ(OpCount(run.ops_after, kNchwcConv), 1);  // the expand
  auto fused = FindNode(run.optimized_bytes, "NchwcDepthwisePointwiseConv", "com.onyx");
  ASSERT_NE(fused, nullptr);
  EXPECT_EQ(Attr(*fused, "dw_activation")->s, "Clip");
  EXPECT_EQ(Attr(*fused, "dw_activation_params")->floats, (std::vector<float>{0.0f, 6.0f}));
  EXPECT_EQ(Attr(*fused, "group")->i, 20);
  EXPECT_EQ(Attr(*fused, "activation"), nullptr);
  EXPECT_EQ(fused->inputs.size(), 6u);  // X, W_dw, B_dw, W, B, Z
  ExpectSameOutputs(bytes, run.optimized_bytes, 56);
}

TEST(NchwcDepthwisePointwiseFusion, LeavesOtherPairsAlone) {
  Variant small;
  small.size = 40;
  Variant strided;
  strided.pw_stride = 2;
  Variant residual;
  residual.dw_residual = true;
  Variant shared;
  shared.dw_read_elsewhere = true;
  for (const Variant& v : {small, strided, residual, shared}) {
    SCOPED_TRACE("size " + std::to_string(v.size) + " stride " + std::to_string(v.pw_stride) +
                 (v.dw_residual ? " dw residual" : "") + (v.dw_read_elsewhere ? " shared" : ""));
    const std::string bytes = Block(v).Bytes();
    auto run = Fuse(bytes);
    EXPECT_EQ(OpCount(run.ops_after, kFused), 0);
    EXPECT_EQ(OpCount(run.ops_after, kNchwcConv), 3);
    ExpectSameOutputs(bytes, run.optimized_bytes, v.size);
  }
}

TEST(NchwcExpandDepthwisePointwiseFusion, TakesTheExpandIn) {
  Variant v;
  v.stem = true;
  const std::string bytes = Block(v).Bytes();
  auto run = FuseWithExpand(bytes);
  EXPECT_EQ(OpCount(run.ops_after, kFused), 1);
  EXPECT_EQ(OpCount(run.ops_after, kNchwcConv), 1);  // the stem
  auto fused = FindNode(run.optimized_bytes, "NchwcDepthwisePointwiseConv", "com.onyx");
  ASSERT_NE(fused, nullptr);
  ASSERT_EQ(fused->inputs.size(), 8u);  // X, W_dw, B_dw, W, B, Z, W_exp, B_exp
  EXPECT_EQ(fused->inputs[0], fused->inputs[5]);  // the block's input, also the residual
  EXPECT_EQ(Attr(*fused, "exp_activation")->s, "Relu");
  EXPECT_EQ(Attr(*fused, "dw_activation")->s, "Clip");
  EXPECT_EQ(Attr(*fused, "activation"), nullptr);
  ExpectSameOutputs(bytes, run.optimized_bytes, 56);
}

TEST(NchwcExpandDepthwisePointwiseFusion, LeavesAnExpandReadElsewhereWithAResidualOrOnThePlainInput) {
  Variant shared;
  shared.stem = shared.e_read_elsewhere = true;
  Variant residual;
  residual.stem = residual.e_residual = true;
  Variant plain;  // the expand reads the graph's NCHW input itself (plain_input: fewer channels than any block)
  plain.channels = 4;
  for (const Variant& v : {shared, residual, plain}) {
    SCOPED_TRACE(v.e_read_elsewhere ? "shared" : v.e_residual ? "residual" : "plain input");
    const std::string bytes = Block(v).Bytes();
    auto run = FuseWithExpand(bytes);
    EXPECT_EQ(OpCount(run.ops_after, kFused), 1);
    EXPECT_EQ(OpCount(run.ops_after, kNchwcConv), v.stem ? 2 : 1);
    auto fused = FindNode(run.optimized_bytes, "NchwcDepthwisePointwiseConv", "com.onyx");
    ASSERT_NE(fused, nullptr);
    EXPECT_EQ(fused->inputs.size(), 6u);
    ExpectSameOutputs(bytes, run.optimized_bytes, v.size, v.channels);
  }
}

}  // namespace
}  // namespace onyx
