// QdqDynamicConvFusion: quantize_dynamic's Conv (DynamicQuantizeLinear + ConvInteger + Cast + Mul
// [+ Add] [+ Relu/Clip/SiLU]) becomes one com.onyx DynamicQuantizeConv, equal to the unfused graph bit
// for bit; anything else is left as it is.
#include "optimizer/fusion_test_util.h"
#include "optimizer/pattern_util.h"

namespace onyx {
namespace {

using namespace test;

Tensor I8(const Shape& shape, uint32_t seed) {
  Tensor t(DataType::kInt8, shape);
  uint32_t s = seed * 2654435761u + 11u;
  for (int64_t i = 0; i < t.size(); ++i) {
    s = s * 1664525u + 1013904223u;
    t.data<int8_t>()[i] = static_cast<int8_t>(static_cast<int>((s >> 8) % 255u) - 127);
  }
  return t;
}

struct ConvCase {
  int64_t c = 4, m = 6, k = 3, group = 1, stride = 1, pad = 1;
  bool bias = true;
  bool per_channel = false;      // w_scale [M, 1, 1] and w_zero_point [M]
  std::string act;               // "", "Relu", "Clip", "Silu" (Mul(v, Sigmoid(v))) or "SiluSwapped" (Mul(Sigmoid(v), v))
  bool gate_is_output = false;   // the SiLU's Sigmoid output is a graph output too
  std::string residual;          // "", "after" (Add(v, r)), "before" (Add(r, v)) or "broadcast" (r [1, M, 1, 1])
  bool cast_read_elsewhere = false;
  bool mul_is_output = false;
  bool w_is_input = false;
  bool w_scale_last_axis = false;  // w_scale [1, 1, M]: broadcasts along the width, not the channels
  bool second_conv = false;        // another ConvInteger reads the same DynamicQuantizeLinear
  bool symbolic_channels = false;  // x: [1, C, 7, 7] with C symbolic
};

std::string DynamicConv(const ConvCase& p) {
  ModelBuilder b(13);
  const int64_t hw = 7, out_hw = (hw + 2 * p.pad - p.k) / p.stride + 1;
  b.Input("x", DataType::kFloat, {1, p.symbolic_channels ? -1 : p.c, hw, hw}).Output("y", DataType::kFloat, {1, p.m, out_hw, out_hw});
  const Shape w_shape = {p.m, p.c / p.group, p.k, p.k};
  if (p.w_is_input) b.Input("w", DataType::kInt8, w_shape);
  else b.Initializer("w", I8(w_shape, 3));
  if (p.per_channel) {
    b.Initializer("w_s", RandomTensor({p.m, 1, 1}, 4, 0.01f, 0.05f));
    Tensor z(DataType::kInt8, {p.m});
    for (int64_t i = 0; i < p.m; ++i) z.data<int8_t>()[i] = static_cast<int8_t>(i % 3 - 1);
    b.Initializer("w_z", z);
  } else if (p.w_scale_last_axis) {
    b.Initializer("w_s", RandomTensor({1, 1, p.m}, 4, 0.01f, 0.05f));
    b.Initializer("w_z", Tensor::Scalar<int8_t>(DataType::kInt8, 0));
  } else {
    b.Initializer("w_s", Scalar(0.03f));
    b.Initializer("w_z", Tensor::Scalar<int8_t>(DataType::kInt8, 0));
  }
  b.Node("DynamicQuantizeLinear", {"x"}, {"xq", "xs", "xz"});
  b.Node("Mul", {"xs", "w_s"}, {"scale"});
  auto& conv = b.Node("ConvInteger", {"xq", "w", "xz", "w_z"}, {"acc"});
  conv.attributes.push_back(IntsAttr("pads", {p.pad, p.pad, p.pad, p.pad}));
  conv.attributes.push_back(IntsAttr("strides", {p.stride, p.stride}));
  if (p.group > 1) conv.attributes.push_back(IntAttr("group", p.group));
  b.Node("Cast", {"acc"}, {"accf"}).attributes.push_back(IntAttr("to", 1));
  std::string v = p.bias || !p.act.empty() || !p.residual.empty() ? "mm" : "y";
  b.Node("Mul", {"accf", "scale"}, {v});
  if (p.bias) {
    b.Initializer("bias", RandomTensor({1, p.m, 1, 1}, 5));
    const std::string next = p.act.empty() && p.residual.empty() ? "y" : "biased";
    b.Node("Add", {v, "bias"}, {next});
    v = next;
  }
  if (!p.residual.empty()) {
    // No value_info: the conv result's dims, which the fusion needs before it takes a residual,
    // come from shape inference (ConvInteger's and DynamicQuantizeLinear's rules).
    const bool full = p.residual != "broadcast";
    b.Input("r", DataType::kFloat, full ? Shape{1, p.m, out_hw, out_hw} : Shape{1, p.m, 1, 1});
    const std::string next = p.act.empty() ? "y" : "summed";
    b.Node("Add", p.residual == "before" ? std::vector<std::string>{"r", v} : std::vector<std::string>{v, "r"}, {next});
    v = next;
  }
  if (p.act == "Relu") b.Node("Relu", {v}, {"y"});
  if (p.act == "Silu" || p.act == "SiluSwapped") {
    b.Node("Sigmoid", {v}, {"gate"});
    b.Node("Mul", p.act == "Silu" ? std::vector<std::string>{v, "gate"} : std::vector<std::string>{"gate", v}, {"y"});
    if (p.gate_is_output) b.Output("gate", DataType::kFloat, {1, p.m, out_hw, out_hw});
  }
  if (p.act == "Clip") {
    b.Initializer("lo", Scalar(0.0f)).Initializer("hi", Scalar(0.5f));
    b.Node("Clip", {v, "lo", "hi"}, {"y"});
  }
  if (p.cast_read_elsewhere) b.Output("accf", DataType::kFloat, {1, p.m, out_hw, out_hw});
  if (p.mul_is_output) b.Output("mm", DataType::kFloat, {1, p.m, out_hw, out_hw});
  if (p.second_conv) {
    // A 1x1 ConvInteger on the same codes, its own scale Mul, no bias; and a reader of the codes
    // that no fusion takes (a Cast of the zero point).
    b.Initializer("w2", I8({3, p.c, 1, 1}, 7)).Initializer("w2_s", Scalar(0.02f));
    b.Node("Mul", {"xs", "w2_s"}, {"scale2"});
    b.Node("ConvInteger", {"xq", "w2", "xz"}, {"acc2"});
    b.Node("Cast", {"acc2"}, {"acc2f"}).attributes.push_back(IntAttr("to", 1));
    b.Node("Mul", {"acc2f", "scale2"}, {"y2"});
    b.Node("Cast", {"xz"}, {"zf"}).attributes.push_back(IntAttr("to", 1));
    b.Output("y2", DataType::kFloat, {1, 3, hw, hw}).Output("zf", DataType::kFloat, {});
  }
  return b.Bytes();
}

NamedValues Feeds(int64_t c, uint32_t seed) { return {{"x", RandomTensor({1, c, 7, 7}, seed, -2.0f, 3.0f)}}; }

TEST(QdqDynamicConvFusion, BecomesOneNodeEqualBitForBit) {
  std::vector<ConvCase> cases(6);
  cases[1].bias = false;
  cases[2].act = "Relu";
  cases[3].act = "Clip", cases[3].per_channel = true;
  cases[4].group = 4, cases[4].c = 4, cases[4].m = 4, cases[4].stride = 2;  // depthwise, stride 2
  cases[5].k = 1, cases[5].pad = 0, cases[5].bias = false, cases[5].act = "Relu";
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string bytes = DynamicConv(cases[i]);
    auto run = RunPasses(bytes, {"QdqDynamicConvFusion"});
    EXPECT_EQ(run.ops_after, (std::map<std::string, int>{{"com.onyx.DynamicQuantizeConv", 1}})) << "case " << i;
    auto fused = FindNode(run.optimized_bytes, "DynamicQuantizeConv", "com.onyx");
    ASSERT_NE(fused, nullptr);
    EXPECT_EQ(fused->inputs.size(), cases[i].bias ? 5u : 4u) << "case " << i;
    EXPECT_EQ(AttrInts(*fused, "pads").size(), 4u);
    ExpectSameOutputs(bytes, run.optimized_bytes, Feeds(cases[i].c, 10 + static_cast<uint32_t>(i)), {0.0, 0.0});
  }
}

// A SiLU after the conv (YOLO's activation) joins the node, on each compute path: the
// weight-stationary GEMM (1x1), the implicit im2col (3x3), the depthwise loop.
TEST(QdqDynamicConvFusion, SiluJoinsEqualBitForBit) {
  std::vector<ConvCase> cases(4);
  for (auto& c : cases) c.act = "Silu", c.c = 8, c.m = 16;
  cases[0].k = 1, cases[0].pad = 0;
  cases[1].act = "SiluSwapped", cases[1].per_channel = true;
  cases[2].group = 8, cases[2].m = 8, cases[2].stride = 2;
  cases[3].bias = false;
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string bytes = DynamicConv(cases[i]);
    auto run = RunPasses(bytes, {"QdqDynamicConvFusion"});
    EXPECT_EQ(run.ops_after, (std::map<std::string, int>{{"com.onyx.DynamicQuantizeConv", 1}})) << "case " << i;
    auto fused = FindNode(run.optimized_bytes, "DynamicQuantizeConv", "com.onyx");
    ASSERT_NE(fused, nullptr);
    EXPECT_EQ(AttrString(*fused, "activation", ""), "Silu");
    ExpectSameOutputs(bytes, run.optimized_bytes, Feeds(cases[i].c, 40 + static_cast<uint32_t>(i)), {0.0, 0.0});
  }
  ConvCase read_elsewhere;
  read_elsewhere.act = "Silu", read_elsewhere.gate_is_output = true;  // the Sigmoid stays, and so the SiLU
  const std::string bytes = DynamicConv(read_elsewhere);
  auto run = RunPasses(bytes, {"QdqDynamicConvFusion"});
  EXPECT_EQ(run.ops_after, (std::map<std::string, int>{{"com.onyx.DynamicQuantizeConv", 1}, {"Sigmoid", 1}, {"Mul", 1}}));
  ExpectSameOutputs(bytes, run.optimized_bytes, Feeds(read_elsewhere.c, 50), {0.0, 0.0});
}

// A residual Add (ResNet's shortcut: another value of the result's dims) joins as input Z, before
// the activation, on each compute path; one that broadcasts stays.
TEST(QdqDynamicConvFusion, ResidualAddJoinsEqualBitForBit) {
  std::vector<ConvCase> cases(4);
  for (auto& c : cases) c.c = 8, c.m = 16, c.residual = "after";
  cases[0].k = 1, cases[0].pad = 0, cases[0].act = "Relu";
  cases[1].act = "Clip", cases[1].residual = "before";
  cases[2].group = 8, cases[2].m = 8;  // depthwise, no activation
  cases[3].k = 1, cases[3].pad = 0, cases[3].act = "Silu", cases[3].bias = false;
  for (size_t i = 0; i < cases.size(); ++i) {
    const ConvCase& p = cases[i];
    const std::string bytes = DynamicConv(p);
    auto run = RunPasses(bytes, {"QdqDynamicConvFusion"});
    EXPECT_EQ(run.ops_after, (std::map<std::string, int>{{"com.onyx.DynamicQuantizeConv", 1}})) << "case " << i;
    auto fused = FindNode(run.optimized_bytes, "DynamicQuantizeConv", "com.onyx");
    ASSERT_NE(fused, nullptr);
    ASSERT_EQ(fused->inputs.size(), 7u) << "case " << i;
    EXPECT_EQ(fused->inputs[6], "r");
    NamedValues feeds = Feeds(p.c, 60 + static_cast<uint32_t>(i));
    feeds.push_back({"r", RandomTensor({1, p.m, 7, 7}, 70 + static_cast<uint32_t>(i), -3.0f, 3.0f)});
    ExpectSameOutputs(bytes, run.optimized_bytes, feeds, {0.0, 0.0});
  }
  ConvCase broadcast;
  broadcast.residual = "broadcast", broadcast.act = "Relu";
  auto run = RunPasses(DynamicConv(broadcast), {"QdqDynamicConvFusion"});
  EXPECT_EQ(run.ops_after, (std::map<std::string, int>{{"com.onyx.DynamicQuantizeConv", 1}, {"Add", 1}, {"Relu", 1}}));
}

TEST(QdqDynamicConvFusion, IntermediatesReadElsewhereStay) {
  ConvCase p;
  p.cast_read_elsewhere = true;  // the Cast's output is a graph output
  auto run = RunPasses(DynamicConv(p), {"QdqDynamicConvFusion"});
  EXPECT_EQ(OpCount(run.ops_after, "ConvInteger"), 1);
  EXPECT_EQ(OpCount(run.ops_after, "com.onyx.DynamicQuantizeConv"), 0);
  p = ConvCase{};
  p.mul_is_output = true;  // the Mul's result is a graph output: fused up to it, the Add stays
  const std::string bytes = DynamicConv(p);
  run = RunPasses(bytes, {"QdqDynamicConvFusion"});
  EXPECT_EQ(run.ops_after, (std::map<std::string, int>{{"com.onyx.DynamicQuantizeConv", 1}, {"Add", 1}}));
  ExpectSameOutputs(bytes, run.optimized_bytes, Feeds(p.c, 30), {0.0, 0.0});
}

TEST(QdqDynamicConvFusion, NonConstantWeightOrOtherScaleAxisStays) {
  ConvCase p;
  p.w_is_input = true;
  auto run = RunPasses(DynamicConv(p), {"QdqDynamicConvFusion"});
  EXPECT_EQ(OpCount(run.ops_after, "ConvInteger"), 1);
  p = ConvCase{};
  p.w_scale_last_axis = true;
  p.m = 7;  // [1, 1, 7] broadcasts along the output's width (7), not its channels
  run = RunPasses(DynamicConv(p), {"QdqDynamicConvFusion"});
  EXPECT_EQ(OpCount(run.ops_after, "ConvInteger"), 1);
  EXPECT_EQ(OpCount(run.ops_after, "com.onyx.DynamicQuantizeConv"), 0);
}

TEST(QdqDynamicConvFusion, SharedDynamicQuantizeLinearStaysForItsOtherReaders) {
  ConvCase p;
  p.second_conv = true;
  const std::string bytes = DynamicConv(p);
  auto run = RunPasses(bytes, {"QdqDynamicConvFusion"});
  EXPECT_EQ(OpCount(run.ops_after, "com.onyx.DynamicQuantizeConv"), 2);
  EXPECT_EQ(OpCount(run.ops_after, "ConvInteger"), 0);
  EXPECT_EQ(OpCount(run.ops_after, "DynamicQuantizeLinear"), 1);  // its zero point is still read
  ExpectSameOutputs(bytes, run.optimized_bytes, Feeds(p.c, 20), {0.0, 0.0});
}

TEST(QdqDynamicConvFusion, KernelRejectsBadInputsWithAMessage) {
  ConvCase p;
  p.symbolic_channels = true;
  auto run = RunPasses(DynamicConv(p), {"QdqDynamicConvFusion"});
  ASSERT_EQ(OpCount(run.ops_after, "com.onyx.DynamicQuantizeConv"), 1);
  Session s(run.optimized_bytes.data(), run.optimized_bytes.size(), SessionOptions{});
  // x with 3 channels for a weight of 4 input channels.
  try {
    s.Run({{"x", RandomTensor({1, 3, 7, 7}, 1)}});
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("channels do not match"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace onyx
