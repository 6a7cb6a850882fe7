// LayerNormFusion, SimplifiedLayerNormFusion and SkipLayerNormFusion.
#include "optimizer/fusion_test_util.h"

namespace onyx {
namespace {

using namespace test;

const NamedValues kFeeds = {{"x", RandomTensor({2, 3, 8}, 1, -2.0f, 2.0f)}};

struct LnOptions {
  int64_t opset = 17;
  bool pow = true;        // d^2 as Pow(d, 2), else d*d
  bool div = true;        // d / std, else d * Reciprocal(std)
  bool dup_sub = false;   // older torch: a second Sub for the division
  bool affine = true;     // scale and bias
  bool commuted = false;  // scale * n and bias + .
  std::vector<int64_t> axes = {-1};
  int64_t keepdims = 1;
};

ModelBuilder LayerNormModel(const LnOptions& o) {
  ModelBuilder b(o.opset);
  b.Input("x", DataType::kFloat, {2, 3, 8}).Output("y", DataType::kFloat, {2, 3, 8});
  b.Initializer("two", Scalar(2.0f)).Initializer("eps", Scalar(1e-5f));
  b.Initializer("gamma", RandomTensor({8}, 2, 0.5f, 1.5f)).Initializer("beta", RandomTensor({8}, 3));
  auto reduce = [&](const std::string& in, const std::string& out) {
    if (o.opset >= 18) {
      b.Initializer(out + "_axes", Int64s(o.axes));
      b.Node("ReduceMean", {in, out + "_axes"}, {out}).attributes.push_back(IntAttr("keepdims", o.keepdims));
    } else {
      auto& n = b.Node("ReduceMean", {in}, {out});
      n.attributes = {IntsAttr("axes", o.axes), IntAttr("keepdims", o.keepdims)};
    }
  };
  reduce("x", "mu");
  b.Node("Sub", {"x", "mu"}, {"d"});
  if (o.dup_sub) b.Node("Sub", {"x", "mu"}, {"d2"});
  if (o.pow)
    b.Node("Pow", {"d", "two"}, {"sq"});
  else
    b.Node("Mul", {"d", "d"}, {"sq"});
  reduce("sq", "var");
  b.Node("Add", {"var", "eps"}, {"ve"});
  b.Node("Sqrt", {"ve"}, {"sd"});
  const std::string num = o.dup_sub ? "d2" : "d";
  const std::string n_out = o.affine ? "n" : "y";
  if (o.div) {
    b.Node("Div", {num, "sd"}, {n_out});
  } else {
    b.Node("Reciprocal", {"sd"}, {"r"});
    b.Node("Mul", {num, "r"}, {n_out});
  }
  if (o.affine) {
    b.Node("Mul", o.commuted ? std::vector<std::string>{"gamma", "n"} : std::vector<std::string>{"n", "gamma"}, {"ng"});
    b.Node("Add", o.commuted ? std::vector<std::string>{"beta", "ng"} : std::vector<std::string>{"ng", "beta"}, {"y"});
  }
  return b;
}

TEST(LayerNormFusion, FusesTheTorchFormsOverTheLastAxis) {
  std::vector<LnOptions> variants(6);
  variants[1].pow = false;
  variants[1].div = false;
  variants[2].dup_sub = true;
  variants[3].opset = 13;
  variants[3].commuted = true;
  variants[4].opset = 18;
  variants[5].affine = false;
  for (size_t i = 0; i < variants.size(); ++i) {
    const std::string bytes = LayerNormModel(variants[i]).Bytes();
    auto run = RunFusion(bytes, "LayerNormFusion");
    EXPECT_EQ(run.ops_after, (std::map<std::string, int>{{"LayerNormalization", 1}})) << "variant " << i;
    auto ln = FindNode(run.optimized_bytes, "LayerNormalization");
    ASSERT_NE(ln, nullptr);
    EXPECT_EQ(Attr(*ln, "axis")->i, -1);
    EXPECT_FLOAT_EQ(Attr(*ln, "epsilon")->f, 1e-5f);
    EXPECT_EQ(ln->inputs.size(), variants[i].affine ? 3u : 2u);
    ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes, kFeeds);
  }
}

TEST(LayerNormFusion, FusesANormalizationOverTheLastTwoAxes) {
  LnOptions o;
  o.axes = {-2, -1};
  o.affine = false;
  const std::string bytes = LayerNormModel(o).Bytes();
  auto run = RunFusion(bytes, "LayerNormFusion");
  auto ln = FindNode(run.optimized_bytes, "LayerNormalization");
  ASSERT_NE(ln, nullptr);
  EXPECT_EQ(Attr(*ln, "axis")->i, -2);
  ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes, kFeeds);
}

TEST(LayerNormFusion, LeavesOtherAxesKeepdims0AndSharedIntermediates) {
  LnOptions middle_axis;
  middle_axis.axes = {1};
  LnOptions no_keepdims;
  no_keepdims.keepdims = 0;
  for (const LnOptions& o : {middle_axis, no_keepdims}) {
    auto run = RunFusion(LayerNormModel(o).Bytes(), "LayerNormFusion");
    EXPECT_EQ(OpCount(run.ops_after, "LayerNormalization"), 0);
  }
  ModelBuilder b = LayerNormModel({});
  b.Output("sd", DataType::kFloat, {2, 3, 1});
  auto run = RunFusion(b.Bytes(), "LayerNormFusion");
  EXPECT_EQ(OpCount(run.ops_after, "LayerNormalization"), 0);
}

TEST(LayerNormFusion, FusesTheKerasForm) {
  // m = mean(x); s = gamma / sqrt(mean((x-m)^2) + eps); y = x*s + (beta - m*s)
  ModelBuilder b;
  b.Input("x", DataType::kFloat, {2, 3, 8}).Output("y", DataType::kFloat, {2, 3, 8});
  b.Initializer("eps", Scalar(1e-3f));
  b.Initializer("gamma", RandomTensor({8}, 2, 0.5f, 1.5f)).Initializer("beta", RandomTensor({8}, 3));
  b.Node("ReduceMean", {"x"}, {"m"}).attributes.push_back(IntsAttr("axes", {-1}));
  b.Node("Sub", {"x", "m"}, {"d"});
  b.Node("Mul", {"d", "d"}, {"sq"});
  b.Node("ReduceMean", {"sq"}, {"var"}).attributes.push_back(IntsAttr("axes", {2}));
  b.Node("Add", {"var", "eps"}, {"ve"});
  b.Node("Sqrt", {"ve"}, {"sd"});
  b.Node("Reciprocal", {"sd"}, {"r"});
  b.Node("Mul", {"r", "gamma"}, {"s"});
  b.Node("Mul", {"x", "s"}, {"xs"});
  b.Node("Mul", {"m", "s"}, {"ms"});
  b.Node("Sub", {"beta", "ms"}, {"off"});
  b.Node("Add", {"xs", "off"}, {"y"});
  const std::string bytes = b.Bytes();
  auto run = RunFusion(bytes, "LayerNormFusion");
  EXPECT_EQ(run.ops_after, (std::map<std::string, int>{{"LayerNormalization", 1}}));
  auto ln = FindNode(run.optimized_bytes, "LayerNormalization");
  ASSERT_NE(ln, nullptr);
  EXPECT_EQ(ln->inputs, (std::vector<std::string>{"x", "gamma", "beta"}));
  EXPECT_FLOAT_EQ(Attr(*ln, "epsilon")->f, 1e-3f);
  ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes, kFeeds);
}

ModelBuilder RmsModel(bool pow_div, const std::vector<int64_t>& axes = {-1}) {
  ModelBuilder b(13);
  b.Input("x", DataType::kFloat, {2, 3, 8}).Output("y", DataType::kFloat, {2, 3, 8});
  b.Initializer("two", Scalar(2.0f)).Initializer("eps", Scalar(1e-6f)).Initializer("gamma", RandomTensor({8}, 2));
  if (pow_div)
    b.Node("Pow", {"x", "two"}, {"sq"});
  else
    b.Node("Mul", {"x", "x"}, {"sq"});
  b.Node("ReduceMean", {"sq"}, {"var"}).attributes.push_back(IntsAttr("axes", axes));
  b.Node("Add", {"eps", "var"}, {"ve"});
  b.Node("Sqrt", {"ve"}, {"sd"});
  if (pow_div) {
    b.Node("Div", {"x", "sd"}, {"n"});
  } else {
    b.Node("Reciprocal", {"sd"}, {"r"});
    b.Node("Mul", {"r", "x"}, {"n"});
  }
  b.Node("Mul", {"gamma", "n"}, {"y"});
  return b;
}

TEST(SimplifiedLayerNormFusion, FusesRmsNormalization) {
  for (bool pow_div : {true, false}) {
    const std::string bytes = RmsModel(pow_div).Bytes();
    auto run = RunFusion(bytes, "SimplifiedLayerNormFusion");
    EXPECT_EQ(run.ops_after, (std::map<std::string, int>{{"SimplifiedLayerNormalization", 1}}));
    auto n = FindNode(run.optimized_bytes, "SimplifiedLayerNormalization");
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(n->inputs, (std::vector<std::string>{"x", "gamma"}));
    EXPECT_FLOAT_EQ(Attr(*n, "epsilon")->f, 1e-6f);
    ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes, kFeeds);
  }
}

TEST(SimplifiedLayerNormFusion, LeavesOtherAxesAndSharedIntermediates) {
  auto run = RunFusion(RmsModel(true, {1}).Bytes(), "SimplifiedLayerNormFusion");
  EXPECT_EQ(OpCount(run.ops_after, "SimplifiedLayerNormalization"), 0);
  ModelBuilder b = RmsModel(true);
  b.Output("var", DataType::kFloat, {2, 3, 1});
  run = RunFusion(b.Bytes(), "SimplifiedLayerNormFusion");
  EXPECT_EQ(OpCount(run.ops_after, "SimplifiedLayerNormalization"), 0);
}

// [bias-add] + residual Add + LayerNormalization (opset 17) or SimplifiedLayerNormalization.
struct SkipOptions {
  bool bias = false;
  bool bias_first = true;  // Add(bias, mm) as BERT, else Add(mm, bias) as GPT-2
  bool sum_read_later = false;
  bool simplified = false;
  std::vector<int64_t> skip_dims = {-1, 3, 8};
};

ModelBuilder SkipModel(const SkipOptions& o) {
  ModelBuilder b;
  b.Input("x", DataType::kFloat, {-1, 3, 8}).Input("skip", DataType::kFloat, o.skip_dims);
  b.Output("y", DataType::kFloat, {-1, 3, 8});
  b.Initializer("gamma", RandomTensor({8}, 2, 0.5f, 1.5f)).Initializer("beta", RandomTensor({8}, 3));
  std::string input = "x";
  if (o.bias) {
    b.Initializer("bias", RandomTensor({8}, 4));
    b.Node("Add", o.bias_first ? std::vector<std::string>{"bias", "x"} : std::vector<std::string>{"x", "bias"}, {"xb"});
    input = "xb";
  }
  b.Node("Add", {input, "skip"}, {"sum"});
  if (o.simplified) {
    b.Node("SimplifiedLayerNormalization", {"sum", "gamma"}, {"y"}).attributes = {FloatAttr("epsilon", 1e-6f)};
  } else {
    b.Node("LayerNormalization", {"sum", "gamma", "beta"}, {"y"}).attributes = {FloatAttr("epsilon", 1e-6f)};
  }
  if (o.sum_read_later) {
    b.Node("Add", {"sum", "y"}, {"z"});
    b.Output("z", DataType::kFloat, {-1, 3, 8});
  }
  return b;
}

NamedValues SkipFeeds(const std::vector<int64_t>& skip_dims) {
  Shape skip;
  for (int64_t d : skip_dims) skip.push_back(d < 0 ? 2 : d);
  return {{"x", RandomTensor({2, 3, 8}, 5)}, {"skip", RandomTensor(skip, 6)}};
}

TEST(SkipLayerNormFusion, FusesResidualAddsWithAndWithoutBias) {
  std::vector<SkipOptions> variants(5);
  variants[1].bias = true;
  variants[2].bias = true;
  variants[2].bias_first = false;
  variants[2].sum_read_later = true;
  variants[3].skip_dims = {1, 3, 8};
  variants[4].skip_dims = {3, 8};
  for (size_t i = 0; i < variants.size(); ++i) {
    const SkipOptions& o = variants[i];
    const std::string bytes = SkipModel(o).Bytes();
    auto run = RunFusion(bytes, "SkipLayerNormFusion");
    auto n = FindNode(run.optimized_bytes, "SkipLayerNormalization", "com.microsoft");
    ASSERT_NE(n, nullptr) << "variant " << i;
    EXPECT_EQ(OpCount(run.ops_after, "LayerNormalization"), 0);
    EXPECT_EQ(OpCount(run.ops_after, "Add"), o.sum_read_later ? 1 : 0);
    std::vector<std::string> inputs = {"x", "skip", "gamma", "beta"};
    if (o.bias) inputs.push_back("bias");
    EXPECT_EQ(n->inputs, inputs) << "variant " << i;
    EXPECT_EQ(n->outputs.size(), o.sum_read_later ? 4u : 1u);
    if (o.sum_read_later) {
      EXPECT_EQ(n->outputs[3], "sum");
    }
    EXPECT_FLOAT_EQ(Attr(*n, "epsilon")->f, 1e-6f);
    ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes, SkipFeeds(o.skip_dims));
  }
}

TEST(SkipLayerNormFusion, FusesTheSimplifiedForm) {
  SkipOptions o;
  o.simplified = true;
  o.bias = true;
  const std::string bytes = SkipModel(o).Bytes();
  auto run = RunFusion(bytes, "SkipLayerNormFusion");
  auto n = FindNode(run.optimized_bytes, "SkipSimplifiedLayerNormalization", "com.microsoft");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->inputs, (std::vector<std::string>{"x", "skip", "gamma", "bias"}));
  ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes, SkipFeeds(o.skip_dims));
}

TEST(SkipLayerNormFusion, LeavesSkipsThatBroadcastOtherwiseAndNormalizationsOverMoreAxes) {
  SkipOptions per_row;
  per_row.skip_dims = {-1, 1, 8};  // broadcast over the sequence: not a skip SkipLayerNorm takes
  auto run = RunFusion(SkipModel(per_row).Bytes(), "SkipLayerNormFusion");
  EXPECT_EQ(OpCount(run.ops_after, "LayerNormalization"), 1);
  ModelBuilder b = SkipModel({});
  b.model().graph->nodes.back()->attributes.push_back(IntAttr("axis", 1));
  b.model().graph->initializers["gamma"] = RandomTensor({3, 8}, 2);
  b.model().graph->initializers["beta"] = RandomTensor({3, 8}, 3);
  run = RunFusion(b.Bytes(), "SkipLayerNormFusion");
  EXPECT_EQ(OpCount(run.ops_after, "LayerNormalization"), 1);
}

}  // namespace
}  // namespace onyx
