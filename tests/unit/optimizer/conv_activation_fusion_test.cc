// ConvActivationFusion (com.microsoft.FusedConv) and ConvOnyxActivationFusion (com.onyx).
#include "base/float_types.h"
#include "optimizer/fusion_test_util.h"

namespace onyx {
namespace {

using namespace test;

ModelBuilder ConvModel(DataType dt = DataType::kFloat) {
  ModelBuilder b;
  b.Input("x", dt, {1, 3, 6, 6});
  Tensor w = RandomTensor({4, 3, 3, 3}, 1), bias = RandomTensor({4}, 2);
  if (dt == DataType::kFloat16) {
    Tensor w16(DataType::kFloat16, w.shape()), b16(DataType::kFloat16, bias.shape());
    for (int64_t i = 0; i < w.size(); ++i) w16.data<uint16_t>()[i] = FloatToHalfBits(w.data<float>()[i]);
    for (int64_t i = 0; i < bias.size(); ++i) b16.data<uint16_t>()[i] = FloatToHalfBits(bias.data<float>()[i]);
    w = w16;
    bias = b16;
  }
  b.Initializer("W", w).Initializer("B", bias);
  auto& conv = b.Node("Conv", {"x", "W", "B"}, {"c"});
  conv.attributes.push_back(IntsAttr("pads", {1, 1, 1, 1}));
  conv.attributes.push_back(IntsAttr("strides", {1, 1}));
  return b;
}

const NamedValues kFeeds = {{"x", RandomTensor({1, 3, 6, 6}, 7, -2.0f, 2.0f)}};

struct ActivationCase {
  std::string op;
  std::vector<ir::Attribute> attrs;
  std::vector<float> expected_params;
};

TEST(ConvActivationFusion, FusesOrtActivationsWithTheirParameters) {
  const std::vector<ActivationCase> cases = {
      {"Relu", {}, {}},           {"Sigmoid", {}, {}},
      {"Tanh", {}, {}},           {"LeakyRelu", {FloatAttr("alpha", 0.2f)}, {0.2f}},
      {"LeakyRelu", {}, {0.01f}}, {"HardSigmoid", {FloatAttr("alpha", 0.3f)}, {0.3f, 0.5f}},
  };
  for (const auto& c : cases) {
    ModelBuilder b = ConvModel();
    b.Node(c.op, {"c"}, {"y"}).attributes = c.attrs;
    b.Output("y", DataType::kFloat, {1, 4, 6, 6});
    const std::string bytes = b.Bytes();
    auto run = RunFusion(bytes, "ConvActivationFusion", OptLevel::kExtended);
    EXPECT_EQ(OpCount(run.ops_after, "Conv"), 0) << c.op;
    EXPECT_EQ(OpCount(run.ops_after, c.op), 0) << c.op;
    auto fused = FindNode(run.optimized_bytes, "FusedConv", "com.microsoft");
    ASSERT_NE(fused, nullptr) << c.op;
    EXPECT_EQ(Attr(*fused, "activation")->s, c.op);
    EXPECT_EQ(Attr(*fused, "pads")->ints, (std::vector<int64_t>{1, 1, 1, 1}));
    if (c.expected_params.empty()) {
      EXPECT_EQ(Attr(*fused, "activation_params"), nullptr);
    } else {
      ASSERT_NE(Attr(*fused, "activation_params"), nullptr);
      EXPECT_EQ(Attr(*fused, "activation_params")->floats, c.expected_params);
    }
    EXPECT_EQ(OpsetImport(run.optimized_bytes, "com.microsoft"), 1);
    ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes, kFeeds);
  }
}

TEST(ConvActivationFusion, FusesClipWithConstantBoundsInBothOpsetForms) {
  {  // opset 11+: bounds as inputs, max omitted
    ModelBuilder b = ConvModel();
    b.Initializer("lo", Scalar(0.0f));
    b.Node("Clip", {"c", "lo"}, {"y"});
    b.Output("y", DataType::kFloat, {1, 4, 6, 6});
    const std::string bytes = b.Bytes();
    auto run = RunFusion(bytes, "ConvActivationFusion");
    auto fused = FindNode(run.optimized_bytes, "FusedConv", "com.microsoft");
    ASSERT_NE(fused, nullptr);
    EXPECT_EQ(Attr(*fused, "activation")->s, "Clip");
    EXPECT_EQ(Attr(*fused, "activation_params")->floats, (std::vector<float>{0.0f, std::numeric_limits<float>::max()}));
    ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes, kFeeds);
  }
  {  // opset 6: bounds as attributes
    ModelBuilder b(6, 3);
    b.Input("x", DataType::kFloat, {1, 3, 6, 6});
    b.Initializer("W", RandomTensor({4, 3, 3, 3}, 1));
    b.Node("Conv", {"x", "W"}, {"c"});
    auto& clip = b.Node("Clip", {"c"}, {"y"});
    clip.attributes = {FloatAttr("min", 0.0f), FloatAttr("max", 6.0f)};
    b.Output("y", DataType::kFloat, {1, 4, 4, 4});
    auto run = RunFusion(b.Bytes(), "ConvActivationFusion");
    auto fused = FindNode(run.optimized_bytes, "FusedConv", "com.microsoft");
    ASSERT_NE(fused, nullptr);
    EXPECT_EQ(Attr(*fused, "activation_params")->floats, (std::vector<float>{0.0f, 6.0f}));
  }
}

TEST(ConvActivationFusion, KeepsClipWithBoundsFedAtRunTime) {
  ModelBuilder b = ConvModel();
  b.Input("hi", DataType::kFloat, {});
  b.Node("Clip", {"c", "", "hi"}, {"y"});
  b.Output("y", DataType::kFloat, {1, 4, 6, 6});
  auto run = RunFusion(b.Bytes(), "ConvActivationFusion");
  EXPECT_EQ(OpCount(run.ops_after, "Clip"), 1);
  EXPECT_EQ(OpCount(run.ops_after, "Conv"), 1);
}

TEST(ConvActivationFusion, FusesAResidualAddAsZBeforeTheActivation) {
  for (bool conv_first : {true, false}) {
    for (bool with_relu : {true, false}) {
      ModelBuilder b = ConvModel();
      b.Input("z", DataType::kFloat, {1, 4, 6, 6});
      b.Node("Add", conv_first ? std::vector<std::string>{"c", "z"} : std::vector<std::string>{"z", "c"},
             {with_relu ? "a" : "y"});
      if (with_relu) b.Node("Relu", {"a"}, {"y"});
      b.Output("y", DataType::kFloat, {1, 4, 6, 6});
      const std::string bytes = b.Bytes();
      auto run = RunFusion(bytes, "ConvActivationFusion");
      EXPECT_EQ(OpCount(run.ops_after, "Add"), 0);
      EXPECT_EQ(OpCount(run.ops_after, "Relu"), 0);
      auto fused = FindNode(run.optimized_bytes, "FusedConv", "com.microsoft");
      ASSERT_NE(fused, nullptr);
      EXPECT_EQ(fused->inputs, (std::vector<std::string>{"x", "W", "B", "z"}));
      EXPECT_EQ(Attr(*fused, "activation") != nullptr, with_relu);
      NamedValues feeds = kFeeds;
      feeds.push_back({"z", RandomTensor({1, 4, 6, 6}, 11)});
      ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes, feeds);
    }
  }
}

TEST(ConvActivationFusion, KeepsAddsThatBroadcastAndConvOutputsReadTwice) {
  {  // z broadcasts over the spatial dims: not FusedConv's Z
    ModelBuilder b = ConvModel();
    b.Input("z", DataType::kFloat, {1, 4, 1, 1});
    b.Node("Add", {"c", "z"}, {"y"});
    b.Output("y", DataType::kFloat, {1, 4, 6, 6});
    auto run = RunFusion(b.Bytes(), "ConvActivationFusion");
    EXPECT_EQ(OpCount(run.ops_after, "Conv"), 1);
  }
  {  // the conv output is also a graph output
    ModelBuilder b = ConvModel();
    b.Node("Relu", {"c"}, {"y"});
    b.Output("y", DataType::kFloat, {1, 4, 6, 6}).Output("c", DataType::kFloat, {1, 4, 6, 6});
    auto run = RunFusion(b.Bytes(), "ConvActivationFusion");
    EXPECT_EQ(OpCount(run.ops_after, "Conv"), 1);
    EXPECT_EQ(OpCount(run.ops_after, "Relu"), 1);
  }
  {  // the conv output feeds two nodes
    ModelBuilder b = ConvModel();
    b.Node("Relu", {"c"}, {"y"});
    b.Node("Sigmoid", {"c"}, {"y2"});
    b.Output("y", DataType::kFloat, {1, 4, 6, 6}).Output("y2", DataType::kFloat, {1, 4, 6, 6});
    auto run = RunFusion(b.Bytes(), "ConvActivationFusion");
    EXPECT_EQ(OpCount(run.ops_after, "Conv"), 1);
  }
}

TEST(ConvActivationFusion, LeavesFloat16ConvsAlone) {
  ModelBuilder b = ConvModel(DataType::kFloat16);
  b.Node("Relu", {"c"}, {"y"});
  b.Output("y", DataType::kFloat16, {1, 4, 6, 6});
  auto run = RunFusion(b.Bytes(), "ConvActivationFusion");
  EXPECT_EQ(OpCount(run.ops_after, "Conv"), 1);
}

TEST(ConvOnyxActivationFusion, FusesSiluAndHardSwishOnlyAtLevelAll) {
  auto silu = [] {
    ModelBuilder b = ConvModel();
    b.Node("Sigmoid", {"c"}, {"s"});
    b.Node("Mul", {"s", "c"}, {"y"});
    b.Output("y", DataType::kFloat, {1, 4, 6, 6});
    return b.Bytes();
  }();
  auto hard_swish = [] {
    ModelBuilder b = ConvModel();
    b.Node("HardSwish", {"c"}, {"y"});
    b.Output("y", DataType::kFloat, {1, 4, 6, 6});
    return b.Bytes();
  }();
  auto inlined_hard_swish = [] {
    ModelBuilder b = ConvModel();
    auto& hs = b.Node("HardSigmoid", {"c"}, {"s"});
    hs.attributes = {FloatAttr("alpha", 1.0f / 6.0f), FloatAttr("beta", 0.5f)};
    b.Node("Mul", {"c", "s"}, {"y"});
    b.Output("y", DataType::kFloat, {1, 4, 6, 6});
    return b.Bytes();
  }();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {silu, "Silu"}, {hard_swish, "HardSwish"}, {inlined_hard_swish, "HardSwish"}};
  for (const auto& [bytes, activation] : cases) {
    auto extended = RunPasses(bytes, {"ConvActivationFusion", "ConvOnyxActivationFusion"}, OptLevel::kExtended);
    EXPECT_EQ(OpCount(extended.ops_after, "Conv"), 1) << activation;
    auto all = RunPasses(bytes, {"ConvActivationFusion", "ConvOnyxActivationFusion"}, OptLevel::kAll);
    EXPECT_EQ(OpCount(all.ops_after, "Conv"), 0) << activation;
    EXPECT_EQ(OpCount(all.ops_after, "Mul"), 0) << activation;
    auto fused = FindNode(all.optimized_bytes, "FusedConv", "com.onyx");
    ASSERT_NE(fused, nullptr) << activation;
    EXPECT_EQ(Attr(*fused, "activation")->s, activation);
    EXPECT_EQ(OpsetImport(all.optimized_bytes, "com.onyx"), 1);
    ExpectSameOutputsWhenRunnable(bytes, all.optimized_bytes, kFeeds);
  }
}

// x * Clip(x + 3, 0, 6) / 6 as paddle2onnx writes HardSwish: Clip bounds as opset 9 attributes or
// opset 11 inputs, the last step a Div by 6 or a Mul by 1/6 (either operand order).
std::string ClipHardSwishModel(bool opset9, bool div, float add_c = 3.0f, float hi = 6.0f, bool shape1 = false) {
  ModelBuilder b = opset9 ? ModelBuilder(9, 3) : ConvModel();
  if (opset9) {
    b.Input("x", DataType::kFloat, {1, 3, 6, 6});
    b.Initializer("W", RandomTensor({4, 3, 3, 3}, 1)).Initializer("B", RandomTensor({4}, 2));
    b.Node("Conv", {"x", "W", "B"}, {"c"}).attributes.push_back(IntsAttr("pads", {1, 1, 1, 1}));
  }
  Tensor three = shape1 ? Tensor(DataType::kFloat, Shape{1}) : Scalar(add_c);
  if (shape1) three.data<float>()[0] = add_c;
  b.Initializer("three", three).Initializer("six", Scalar(6.0f)).Initializer("sixth", Scalar(1.0f / 6.0f));
  b.Node("Add", {"c", "three"}, {"a"});
  if (opset9) {
    b.Node("Clip", {"a"}, {"g"}).attributes = {FloatAttr("min", 0.0f), FloatAttr("max", hi)};
  } else {
    b.Initializer("lo", Scalar(0.0f)).Initializer("hi", Scalar(hi));
    b.Node("Clip", {"a", "lo", "hi"}, {"g"});
  }
  b.Node("Mul", {"g", "c"}, {"m"});
  if (div)
    b.Node("Div", {"m", "six"}, {"y"});
  else
    b.Node("Mul", {"sixth", "m"}, {"y"});
  b.Output("y", DataType::kFloat, {1, 4, 6, 6});
  return b.Bytes();
}

TEST(ConvOnyxActivationFusion, FusesHardSwishWrittenWithClip) {
  for (bool opset9 : {false, true}) {
    for (bool div : {false, true}) {
      for (bool shape1 : {false, true}) {
        const std::string bytes = ClipHardSwishModel(opset9, div, 3.0f, 6.0f, shape1);
        const std::string what = std::string(opset9 ? "opset 9" : "opset 11+") + (div ? " Div" : " Mul") +
                                 (shape1 ? " [1] constant" : " scalar constant");
        auto all = RunPasses(bytes, {"ConvActivationFusion", "ConvOnyxActivationFusion"}, OptLevel::kAll);
        auto fused = FindNode(all.optimized_bytes, "FusedConv", "com.onyx");
        ASSERT_NE(fused, nullptr) << what;
        EXPECT_EQ(Attr(*fused, "activation")->s, "HardSwish") << what;
        for (const char* op : {"Conv", "Add", "Clip", "Mul", "Div"}) EXPECT_EQ(OpCount(all.ops_after, op), 0) << what;
        ExpectSameOutputsWhenRunnable(bytes, all.optimized_bytes, kFeeds);
      }
    }
  }
}

TEST(ConvOnyxActivationFusion, KeepsClipGatesThatAreNoHardSwish) {
  // Add 2 instead of 3, Clip to 5 instead of 6: other functions, left alone.
  for (const auto& bytes : {ClipHardSwishModel(false, true, 2.0f), ClipHardSwishModel(true, false, 3.0f, 5.0f)}) {
    auto all = RunPasses(bytes, {"ConvActivationFusion", "ConvOnyxActivationFusion"}, OptLevel::kAll);
    EXPECT_EQ(FindNode(all.optimized_bytes, "FusedConv", "com.onyx"), nullptr);
    EXPECT_EQ(OpCount(all.ops_after, "Clip"), 1);
    ExpectSameOutputsWhenRunnable(bytes, all.optimized_bytes, kFeeds);
  }
  {  // a rank-5 constant would broadcast the result to rank 5
    ModelBuilder b = ConvModel();
    Tensor three(DataType::kFloat, Shape{1, 1, 1, 1, 1});
    three.data<float>()[0] = 3.0f;
    b.Initializer("three", three).Initializer("lo", Scalar(0.0f)).Initializer("hi", Scalar(6.0f));
    b.Initializer("six", Scalar(6.0f));
    b.Node("Add", {"c", "three"}, {"a"});
    b.Node("Clip", {"a", "lo", "hi"}, {"g"});
    b.Node("Mul", {"c", "g"}, {"m"});
    b.Node("Div", {"m", "six"}, {"y"});
    b.Output("y", DataType::kFloat, {1, 1, 4, 6, 6});
    auto all = RunPasses(b.Bytes(), {"ConvActivationFusion", "ConvOnyxActivationFusion"}, OptLevel::kAll);
    EXPECT_EQ(FindNode(all.optimized_bytes, "FusedConv", "com.onyx"), nullptr);
  }
}

TEST(ConvOnyxActivationFusion, FusesResidualThenSilu) {
  ModelBuilder b = ConvModel();
  b.Input("z", DataType::kFloat, {1, 4, 6, 6});
  b.Node("Add", {"z", "c"}, {"a"});
  b.Node("Sigmoid", {"a"}, {"s"});
  b.Node("Mul", {"a", "s"}, {"y"});
  b.Output("y", DataType::kFloat, {1, 4, 6, 6});
  const std::string bytes = b.Bytes();
  auto extended = RunPasses(bytes, {"ConvActivationFusion", "ConvOnyxActivationFusion"}, OptLevel::kExtended);
  auto ms = FindNode(extended.optimized_bytes, "FusedConv", "com.microsoft");
  ASSERT_NE(ms, nullptr);
  EXPECT_EQ(ms->inputs.size(), 4u);
  EXPECT_EQ(OpCount(extended.ops_after, "Sigmoid"), 1);
  auto all = RunPasses(bytes, {"ConvActivationFusion", "ConvOnyxActivationFusion"}, OptLevel::kAll);
  auto onyx = FindNode(all.optimized_bytes, "FusedConv", "com.onyx");
  ASSERT_NE(onyx, nullptr);
  EXPECT_EQ(onyx->inputs, (std::vector<std::string>{"x", "W", "B", "z"}));
  EXPECT_EQ(Attr(*onyx, "activation")->s, "Silu");
  EXPECT_EQ(OpCount(all.ops_after, "Sigmoid"), 0);
  NamedValues feeds = kFeeds;
  feeds.push_back({"z", RandomTensor({1, 4, 6, 6}, 11)});
  ExpectSameOutputsWhenRunnable(bytes, all.optimized_bytes, feeds);
}

TEST(ConvOnyxActivationFusion, KeepsASigmoidGateOfAnotherValue) {
  // x * Sigmoid(c) with x not the conv output is no SiLU.
  ModelBuilder b = ConvModel();
  b.Input("g", DataType::kFloat, {1, 4, 6, 6});
  b.Node("Sigmoid", {"c"}, {"s"});
  b.Node("Mul", {"g", "s"}, {"y"});
  b.Output("y", DataType::kFloat, {1, 4, 6, 6});
  auto run = RunPasses(b.Bytes(), {"ConvActivationFusion", "ConvOnyxActivationFusion"}, OptLevel::kAll);
  EXPECT_EQ(FindNode(run.optimized_bytes, "FusedConv", "com.onyx"), nullptr);
  EXPECT_EQ(OpCount(run.ops_after, "Mul"), 1);
}

}  // namespace
}  // namespace onyx

namespace onyx {
namespace {

using namespace test;

TEST(ConvOnyxActivationFusion, SessionsFuseOnlyIntoOpsTheyHaveKernelsFor) {
  ModelBuilder b = ConvModel();
  b.Node("Sigmoid", {"c"}, {"s"});
  b.Node("Mul", {"c", "s"}, {"y"});
  b.Output("y", DataType::kFloat, {1, 4, 6, 6});
  const std::string bytes = b.Bytes();
  const bool has_kernel = KernelRegistry::Global().Find("CPU", "com.onyx", "FusedConv", 1) != nullptr;
  auto run = RunPasses(bytes, {"ConvActivationFusion", "ConvOnyxActivationFusion"}, OptLevel::kAll, {"CPU"},
                       /*require_kernels=*/true);
  EXPECT_EQ(FindNode(run.optimized_bytes, "FusedConv", "com.onyx") != nullptr, has_kernel);
  // A session at the default level runs the model whatever kernels exist.
  if (MissingCpuKernels(bytes).empty()) {
    Session optimized(bytes.data(), bytes.size(), SessionOptions{});
    SessionOptions plain;
    plain.graph_optimization_level = GraphOptimizationLevel::kDisabled;
    Session original(bytes.data(), bytes.size(), plain);
    EXPECT_EQ(testing::CompareValues(original.Run(kFeeds)[0], optimized.Run(kFeeds)[0]), "");
  }
}

}  // namespace
}  // namespace onyx

namespace onyx {
namespace {

using namespace test;

TEST(ConvActivationFusion, FusesConvsWhoseTypesAreNotInferred) {
  // An op without an inference rule in front: the conv's type comes from its weights.
  ModelBuilder b;
  b.Input("x", DataType::kFloat, {1, 3, 6, 6});
  b.model().opset_imports["com.example"] = 1;
  b.Node("Opaque", {"x"}, {"u"}, "com.example");
  b.Initializer("W", RandomTensor({4, 3, 3, 3}, 1));
  b.Node("Conv", {"u", "W"}, {"c"});
  b.Node("Relu", {"c"}, {"y"});
  b.Output("y", DataType::kFloat, {1, 4, 4, 4});
  auto run = RunFusion(b.Bytes(), "ConvActivationFusion");
  EXPECT_NE(FindNode(run.optimized_bytes, "FusedConv", "com.microsoft"), nullptr);
}

}  // namespace
}  // namespace onyx
