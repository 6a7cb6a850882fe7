// NchwcLayout: regions of convolutions run channel-blocked, with reorders only at their ends.
// The rewritten graph must compute what the original computes (both run unoptimized).
#include "linalg/conv.h"
#include "ops/shape_inference.h"
#include "optimizer/fusion_test_util.h"

namespace onyx {
namespace {

using namespace test;

constexpr const char* kOnyx = "com.onyx.";

ir::Attribute FloatsAttribute(const std::string& name, std::vector<float> v) {
  ir::Attribute a{name, ir::AttrType::kFloats};
  a.floats = std::move(v);
  return a;
}

// Channel counts that are not multiples of any block, so padded lanes are exercised:
//   a = FusedConv(x, 3->12, 3x3, Relu)          x from outside with 3 < block channels: read plain
//   b = Conv(a, 12->12, 1x1)                     also read by Sigmoid outside: one ReorderFromNchwc
//   c = FusedConv(b, 12->12, 3x3, Z = a, LeakyRelu)   residual from inside the region
//   d = Conv(c, 12->20, 3x3, stride 2)           only read inside
//   e = Conv(d, depthwise 20, 3x3)               only read inside
//   y = FusedConv(e, 20->20, 1x1, Z = z)         z from outside: one ReorderToNchwc; y a graph output
ModelBuilder ChainModel() {
  ModelBuilder b;
  b.model().opset_imports["com.microsoft"] = 1;
  b.Input("x", DataType::kFloat, {2, 3, 11, 10});
  b.Input("z", DataType::kFloat, {2, 20, 6, 5});
  b.Initializer("W1", RandomTensor({12, 3, 3, 3}, 1)).Initializer("B1", RandomTensor({12}, 2));
  b.Initializer("W2", RandomTensor({12, 12, 1, 1}, 3)).Initializer("B2", RandomTensor({12}, 4));
  b.Initializer("W3", RandomTensor({12, 12, 3, 3}, 5)).Initializer("B3", RandomTensor({12}, 6));
  b.Initializer("W4", RandomTensor({20, 12, 3, 3}, 7));
  b.Initializer("W5", RandomTensor({20, 1, 3, 3}, 8)).Initializer("B5", RandomTensor({20}, 9));
  b.Initializer("W6", RandomTensor({20, 20, 1, 1}, 10)).Initializer("B6", RandomTensor({20}, 11));
  auto& a = b.Node("FusedConv", {"x", "W1", "B1"}, {"a"}, "com.microsoft");
  a.attributes = {IntsAttr("pads", {1, 1, 1, 1}), StringAttr("activation", "Relu")};
  b.Node("Conv", {"a", "W2", "B2"}, {"b"});
  auto& c = b.Node("FusedConv", {"b", "W3", "B3", "a"}, {"c"}, "com.microsoft");
  c.attributes = {IntsAttr("pads", {1, 1, 1, 1}), StringAttr("activation", "LeakyRelu"),
                  FloatsAttribute("activation_params", {0.1f})};
  auto& d = b.Node("Conv", {"c", "W4"}, {"d"});
  d.attributes = {IntsAttr("pads", {1, 1, 1, 1}), IntsAttr("strides", {2, 2})};
  auto& e = b.Node("Conv", {"d", "W5", "B5"}, {"e"});
  e.attributes = {IntsAttr("pads", {1, 1, 1, 1}), IntAttr("group", 20)};
  b.Node("FusedConv", {"e", "W6", "B6", "z"}, {"y"}, "com.microsoft");
  b.Node("Sigmoid", {"b"}, {"side"});
  b.Output("y", DataType::kFloat, {2, 20, 6, 5}).Output("side", DataType::kFloat, {2, 12, 11, 10});
  return b;
}

NamedValues ChainFeeds() {
  return {{"x", RandomTensor({2, 3, 11, 10}, 21, -2.0f, 2.0f)}, {"z", RandomTensor({2, 20, 6, 5}, 22)}};
}

PassRun RunLayout(const std::string& bytes, bool session = true) {
  return RunPasses(bytes, {"NchwcLayout"}, OptLevel::kAll, {"CPU"}, /*require_kernels=*/session);
}

// Outputs within rtol 1e-3 / atol 1e-4 of the unoptimized graph's. Six stacked convs on inputs in
// [-2, 2] put y's own float32 error (any ISA, blocked or not, against a float64 evaluation) near
// 5e-4 at values of a few units; AVX2's 8-lane blocks sum in another order than the NCHW engines
// and differ by up to 1.5e-4 at a value of 0.12, which a tighter atol would call a failure.
void ExpectCloseOutputs(const std::string& original, const std::string& optimized, const NamedValues& feeds) {
  SessionOptions plain;
  plain.graph_optimization_level = GraphOptimizationLevel::kDisabled;
  Session a(original.data(), original.size(), plain);
  Session b(optimized.data(), optimized.size(), plain);
  const auto expected = a.Run(feeds);
  const auto got = b.Run(feeds);
  ASSERT_EQ(expected.size(), got.size());
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_EQ(testing::CompareValues(expected[i], got[i], {1e-3, 1e-4}), "") << "output " << i;
}

TEST(NchwcLayout, RewritesAConvRegionWithReordersOnlyAtItsEnds) {
  const std::string bytes = ChainModel().Bytes();
  auto run = RunLayout(bytes);
  EXPECT_EQ(OpCount(run.ops_after, std::string(kOnyx) + "NchwcConv"), 6);
  EXPECT_EQ(OpCount(run.ops_after, "Conv"), 0);
  EXPECT_EQ(OpCount(run.ops_after, "com.microsoft.FusedConv"), 0);
  // In: z (x, 3 channels, is read plain by a). Out: b (read by Sigmoid) and y (graph output);
  // a, c, d, e stay blocked.
  EXPECT_EQ(OpCount(run.ops_after, std::string(kOnyx) + "ReorderToNchwc"), 1);
  auto model = LoadModelFromBytes(run.optimized_bytes.data(), run.optimized_bytes.size());
  int plain_inputs = 0;
  for (const auto& n : model->graph->nodes) {
    const ir::Attribute* plain = n->op_type == "NchwcConv" ? n->FindAttribute("plain_input") : nullptr;
    if (plain == nullptr) continue;
    ++plain_inputs;
    EXPECT_EQ(n->inputs[0], "x");
    EXPECT_EQ(plain->i, 1);
    EXPECT_EQ(n->FindAttribute("block")->i, linalg::ConvBlockSize());
  }
  EXPECT_EQ(plain_inputs, 1);
  EXPECT_EQ(OpCount(run.ops_after, std::string(kOnyx) + "ReorderFromNchwc"), 2);
  auto to = FindNode(run.optimized_bytes, "ReorderToNchwc", "com.onyx");
  ASSERT_NE(to, nullptr);
  EXPECT_EQ(Attr(*to, "block")->i, linalg::ConvBlockSize());
  EXPECT_EQ(OpsetImport(run.optimized_bytes, "com.onyx"), 1);
  ExpectCloseOutputs(bytes, run.optimized_bytes, ChainFeeds());
}

TEST(NchwcLayout, KeepsActivationsAndAttributesOfTheConvs) {
  auto run = RunLayout(ChainModel().Bytes());
  auto model = LoadModelFromBytes(run.optimized_bytes.data(), run.optimized_bytes.size());
  int leaky = 0, strided = 0, depthwise = 0;
  for (const auto& n : model->graph->nodes) {
    if (n->op_type != "NchwcConv") continue;
    if (const ir::Attribute* a = n->FindAttribute("activation"); a != nullptr && a->s == "LeakyRelu") {
      ++leaky;
      EXPECT_EQ(n->inputs.size(), 4u);  // Z kept
      EXPECT_EQ(n->FindAttribute("activation_params")->floats, std::vector<float>{0.1f});
    }
    if (const ir::Attribute* s = n->FindAttribute("strides"); s != nullptr && s->ints == std::vector<int64_t>{2, 2})
      ++strided;
    if (const ir::Attribute* g = n->FindAttribute("group"); g != nullptr && g->i == 20) ++depthwise;
  }
  EXPECT_EQ(leaky, 1);
  EXPECT_EQ(strided, 1);
  EXPECT_EQ(depthwise, 1);
}

TEST(NchwcLayout, InfersTheBlockedShapes) {
  auto run = RunLayout(ChainModel().Bytes());
  auto model = LoadModelFromBytes(run.optimized_bytes.data(), run.optimized_bytes.size());
  const TypeMap types = InferGraphTypes(*model->graph);
  const int64_t b = linalg::ConvBlockSize();
  auto blocks = [b](int64_t c) { return (c + b - 1) / b; };
  auto dims_of = [&](const std::string& value) {
    std::vector<int64_t> dims;
    auto it = types.find(value);
    if (it == types.end() || !it->second || !it->second->shape) return dims;
    for (const Dim& d : *it->second->shape) dims.push_back(d.value);
    return dims;
  };
  for (const auto& n : model->graph->nodes) {
    const std::string& out = n->outputs[0];
    if (n->op_type == "NchwcConv" && n->inputs[0] == "x") {  // a: reads x (3 channels) plain
      EXPECT_EQ(dims_of(out), (std::vector<int64_t>{2, blocks(12), 11, 10, b}));
    }
    if (n->op_type == "ReorderToNchwc" && n->inputs[0] == "z") {
      EXPECT_EQ(dims_of(out), (std::vector<int64_t>{2, blocks(20), 6, 5, b}));
    }
    if (n->op_type == "NchwcConv" && n->FindAttribute("strides") != nullptr) {  // d: stride 2, 20 channels
      EXPECT_EQ(dims_of(out), (std::vector<int64_t>{2, blocks(20), 6, 5, b}));
    }
    if (n->op_type == "ReorderFromNchwc") {
      EXPECT_EQ(dims_of(out).size(), 4u) << out;
    }
  }
  // b's Sigmoid runs blocked too: its output (side) is the one reordered back.
  EXPECT_EQ(dims_of("side"), (std::vector<int64_t>{2, 12, 11, 10}));
  EXPECT_EQ(dims_of("y"), (std::vector<int64_t>{2, 20, 6, 5}));
}

TEST(NchwcLayout, GraphOutputsInsideTheRegionKeepTheirNames) {
  ModelBuilder b = ChainModel();
  b.Output("c", DataType::kFloat, {2, 12, 11, 10});
  const std::string bytes = b.Bytes();
  auto run = RunLayout(bytes);
  EXPECT_EQ(OpCount(run.ops_after, std::string(kOnyx) + "NchwcConv"), 6);
  EXPECT_EQ(OpCount(run.ops_after, std::string(kOnyx) + "ReorderFromNchwc"), 3);
  ExpectCloseOutputs(bytes, run.optimized_bytes, ChainFeeds());
}

TEST(NchwcLayout, ValuesReadBySubgraphsAreReorderedOut) {
  // c is read inside the region (by d) and by both branches of an If.
  ModelBuilder b = ChainModel();
  b.Input("cond", DataType::kBool, {});
  auto branch = [](const std::string& op) {
    auto g = std::make_shared<ir::Graph>();
    g->name = op + "_branch";
    auto node = std::make_unique<ir::Node>();
    node->op_type = op;
    node->name = op + "_in_branch";
    node->inputs = {"c"};
    node->outputs = {op + "_out"};
    g->AddNode(std::move(node));
    g->outputs.push_back({op + "_out", ModelBuilder::Type(DataType::kFloat, {2, 12, 11, 10}), ""});
    ir::Attribute a{op == "Neg" ? "then_branch" : "else_branch", ir::AttrType::kGraph};
    a.g = g;
    return a;
  };
  b.Node("If", {"cond"}, {"picked"}).attributes = {branch("Neg"), branch("Abs")};
  b.Output("picked", DataType::kFloat, {2, 12, 11, 10});
  const std::string bytes = b.Bytes();
  auto run = RunLayout(bytes);
  EXPECT_EQ(OpCount(run.ops_after, std::string(kOnyx) + "NchwcConv"), 6);
  EXPECT_EQ(OpCount(run.ops_after, std::string(kOnyx) + "ReorderFromNchwc"), 3);  // b, c and y
  for (bool cond : {true, false}) {
    NamedValues feeds = ChainFeeds();
    feeds.push_back({"cond", Tensor::Scalar<bool>(DataType::kBool, cond)});
    ExpectCloseOutputs(bytes, run.optimized_bytes, feeds);
  }
}

TEST(NchwcLayout, LeavesSmallRegionsAndUnsupportedConvsAlone) {
  {  // one conv: no region
    ModelBuilder b;
    b.Input("x", DataType::kFloat, {1, 3, 6, 6});
    b.Initializer("W", RandomTensor({4, 3, 3, 3}, 1));
    b.Node("Conv", {"x", "W"}, {"y"});
    b.Output("y", DataType::kFloat, {1, 4, 4, 4});
    auto run = RunLayout(b.Bytes());
    EXPECT_EQ(OpCount(run.ops_after, "Conv"), 1);
    EXPECT_EQ(OpCount(run.ops_after, std::string(kOnyx) + "NchwcConv"), 0);
  }
  {  // two convs: a region too small to repay its reorders
    ModelBuilder b;
    b.Input("x", DataType::kFloat, {1, 16, 6, 6});
    b.Initializer("W1", RandomTensor({16, 16, 1, 1}, 1)).Initializer("W2", RandomTensor({16, 16, 1, 1}, 2));
    b.Node("Conv", {"x", "W1"}, {"c"});
    b.Node("Conv", {"c", "W2"}, {"y"});
    b.Output("y", DataType::kFloat, {1, 16, 6, 6});
    auto run = RunLayout(b.Bytes());
    EXPECT_EQ(OpCount(run.ops_after, "Conv"), 2);
    EXPECT_EQ(OpCount(run.ops_after, std::string(kOnyx) + "NchwcConv"), 0);
  }
  {  // grouped channels that are not whole blocks, and weights fed at run time, break the chain
    ModelBuilder b;
    b.Input("x", DataType::kFloat, {1, 16, 6, 6});
    b.Input("Wfed", DataType::kFloat, {16, 16, 1, 1});
    b.Initializer("W1", RandomTensor({16, 16, 1, 1}, 1)).Initializer("Wg", RandomTensor({16, 4, 1, 1}, 2));
    b.Initializer("W3", RandomTensor({16, 16, 1, 1}, 3));
    b.Node("Conv", {"x", "W1"}, {"c1"});
    b.Node("Conv", {"c1", "Wg"}, {"g"}).attributes = {IntAttr("group", 4)};
    b.Node("Conv", {"g", "W3"}, {"c3"});
    b.Node("Conv", {"c3", "Wfed"}, {"y"});
    b.Output("y", DataType::kFloat, {1, 16, 6, 6});
    auto run = RunLayout(b.Bytes());
    EXPECT_EQ(OpCount(run.ops_after, "Conv"), 4);
  }
  {  // float16 convs: the blocked kernels are float only
    ModelBuilder b;
    b.Input("x", DataType::kFloat16, {1, 16, 6, 6});
    std::vector<std::string> prev = {"x"};
    for (int i = 0; i < 3; ++i) {
      Tensor w(DataType::kFloat16, {16, 16, 1, 1});
      for (int64_t k = 0; k < w.size(); ++k) w.data<uint16_t>()[k] = 0x2c00;  // 1/16
      const std::string name = "W" + std::to_string(i), out = i == 2 ? "y" : "c" + std::to_string(i);
      b.Initializer(name, w);
      b.Node("Conv", {prev[0], name}, {out});
      prev = {out};
    }
    b.Output("y", DataType::kFloat16, {1, 16, 6, 6});
    auto run = RunLayout(b.Bytes());
    EXPECT_EQ(OpCount(run.ops_after, "Conv"), 3);
  }
  {  // 3-D convs stay as they are
    ModelBuilder b;
    b.Input("x", DataType::kFloat, {1, 3, 5, 5, 5});
    b.Initializer("W1", RandomTensor({4, 3, 1, 1, 1}, 1)).Initializer("W2", RandomTensor({4, 4, 1, 1, 1}, 2));
    b.Initializer("W3", RandomTensor({4, 4, 1, 1, 1}, 3));
    b.Node("Conv", {"x", "W1"}, {"c"});
    b.Node("Conv", {"c", "W2"}, {"d"});
    b.Node("Conv", {"d", "W3"}, {"y"});
    b.Output("y", DataType::kFloat, {1, 4, 5, 5, 5});
    auto run = RunLayout(b.Bytes());
    EXPECT_EQ(OpCount(run.ops_after, "Conv"), 3);
  }
}

TEST(NchwcLayout, OneDimensionalConvChainsFormARegion) {
  // Three 1-D convs (the first reads its 3 channels plain): one region, one reorder out; a
  // 1-D MaxPool after them is not a member (pools join 2-D regions only).
  ModelBuilder b;
  b.Input("x", DataType::kFloat, {1, 3, 11});
  b.Initializer("W1", RandomTensor({4, 3, 3}, 1)).Initializer("W2", RandomTensor({4, 4, 3}, 2));
  b.Initializer("W3", RandomTensor({4, 4, 3}, 3));
  b.Node("Conv", {"x", "W1"}, {"c"});
  b.Node("Conv", {"c", "W2"}, {"d"});
  b.Node("Conv", {"d", "W3"}, {"e"});
  b.Node("MaxPool", {"e"}, {"y"}).attributes = {IntsAttr("kernel_shape", {2})};
  b.Output("y", DataType::kFloat, {1, 4, 4});
  auto run = RunLayout(b.Bytes());
  EXPECT_EQ(OpCount(run.ops_after, "Conv"), 0);
  EXPECT_EQ(OpCount(run.ops_after, std::string(kOnyx) + "NchwcConv"), 3);
  EXPECT_EQ(OpCount(run.ops_after, std::string(kOnyx) + "ReorderToNchwc"), 0);
  EXPECT_EQ(OpCount(run.ops_after, std::string(kOnyx) + "ReorderFromNchwc"), 1);
  EXPECT_EQ(OpCount(run.ops_after, "MaxPool"), 1);
}

TEST(NchwcLayout, OfflineOptimizationKeepsThePlainLayout) {
  // A saved model would be tied to this CPU's block: only sessions get the blocked layout.
  auto run = RunLayout(ChainModel().Bytes(), /*session=*/false);
  EXPECT_EQ(OpCount(run.ops_after, std::string(kOnyx) + "NchwcConv"), 0);
  EXPECT_EQ(OpCount(run.ops_after, "Conv"), 3);
}

TEST(NchwcLayout, SessionsAtLevelAllMatchLevelExtended) {
  const std::string bytes = ChainModel().Bytes();
  SessionOptions all, extended;
  extended.graph_optimization_level = GraphOptimizationLevel::kExtended;
  Session a(bytes.data(), bytes.size(), extended);
  Session b(bytes.data(), bytes.size(), all);
  const auto expected = a.Run(ChainFeeds());
  const auto got = b.Run(ChainFeeds());
  ASSERT_EQ(expected.size(), got.size());
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_EQ(testing::CompareValues(expected[i], got[i], {1e-3, 1e-4}), "") << "output " << i;
}

}  // namespace
}  // namespace onyx
