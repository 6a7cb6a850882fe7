// HalfBodyToFloat: float16/bfloat16 bodies computed in float32, Casts folded at the body's
// edges and inserted only where a half value must stay half.
#include <cmath>

#include "base/float_types.h"
#include "optimizer/fusion_test_util.h"

namespace onyx {
namespace {

using namespace test;

constexpr char kPass[] = "HalfBodyToFloat";
const DataType kHalf = DataType::kFloat16;

// A float tensor's values rounded to `dtype` (float16 or bfloat16).
Tensor ToHalf(const Tensor& t, DataType dtype = kHalf) {
  Tensor out(dtype, t.shape());
  for (int64_t i = 0; i < t.size(); ++i)
    out.data<uint16_t>()[i] =
        dtype == kHalf ? FloatToHalfBits(t.data<float>()[i]) : FloatToBFloat16Bits(t.data<float>()[i]);
  return out;
}

// Both models run unoptimized; outputs keep their types and agree within the half type's
// rounding (the optimized model rounds once, the original after every node).
void ExpectCloseOutputs(const std::string& original, const std::string& optimized, const NamedValues& feeds,
                        double tol = 2e-2) {
  ExpectSameOutputs(original, optimized, feeds, {tol, tol});
}

// The producer of a value in a serialized model's main graph (a copy), or null.
std::unique_ptr<ir::Node> ProducerOf(const std::string& bytes, const std::string& value) {
  auto model = LoadModelFromBytes(bytes.data(), bytes.size());
  for (auto& node : model->graph->nodes)
    for (const auto& o : node->outputs)
      if (o == value) return std::make_unique<ir::Node>(*node);
  return nullptr;
}

DataType InitializerType(const std::string& bytes, const std::string& value) {
  auto model = LoadModelFromBytes(bytes.data(), bytes.size());
  const Tensor* t = model->graph->FindInitializer(value);
  return t ? t->dtype() : DataType::kUndefined;
}

// x (float) -> Cast(half) -> Conv(W, B) -> Relu -> Cast(float) -> y: an exporter's float16 model
// with float inputs and outputs.
ModelBuilder CastWrappedConv(DataType half) {
  ModelBuilder b;
  b.Input("x", DataType::kFloat, {1, 3, 6, 6});
  b.Node("Cast", {"x"}, {"xh"}).attributes.push_back(IntAttr("to", static_cast<int64_t>(half)));
  b.Initializer("W", ToHalf(RandomTensor({4, 3, 3, 3}, 1), half));
  b.Initializer("B", ToHalf(RandomTensor({4}, 2), half));
  b.Node("Conv", {"xh", "W", "B"}, {"c"}).attributes.push_back(IntsAttr("pads", {1, 1, 1, 1}));
  b.Node("Relu", {"c"}, {"r"});
  b.Node("Cast", {"r"}, {"y"}).attributes.push_back(IntAttr("to", static_cast<int64_t>(DataType::kFloat)));
  b.Output("y", DataType::kFloat, {1, 4, 6, 6});
  return b;
}

const NamedValues kConvFeeds = {{"x", RandomTensor({1, 3, 6, 6}, 7)}};

TEST(HalfBodyToFloat, FoldsTheCastsAroundAFloat16Body) {
  const std::string bytes = CastWrappedConv(kHalf).Bytes();
  auto run = RunPasses(bytes, {kPass, "NoOpElimination"});
  EXPECT_EQ(OpCount(run.ops_after, "Cast"), 0);
  EXPECT_EQ(OpCount(run.ops_after, "Conv"), 1);
  auto conv = FindNode(run.optimized_bytes, "Conv");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->inputs[0], "x");  // the entry Cast folded: the Conv reads the float input
  EXPECT_EQ(InitializerType(run.optimized_bytes, conv->inputs[1]), DataType::kFloat);
  EXPECT_EQ(InitializerType(run.optimized_bytes, conv->inputs[2]), DataType::kFloat);
  EXPECT_EQ(InitializerType(run.optimized_bytes, "W"), DataType::kUndefined);  // the half copy is gone
  ExpectCloseOutputs(bytes, run.optimized_bytes, kConvFeeds);
}

TEST(HalfBodyToFloat, FoldsTheCastsAroundABFloat16Body) {
  const std::string bytes = CastWrappedConv(DataType::kBFloat16).Bytes();
  auto run = RunPasses(bytes, {kPass, "NoOpElimination"});
  EXPECT_EQ(OpCount(run.ops_after, "Cast"), 0);
  auto conv = FindNode(run.optimized_bytes, "Conv");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(InitializerType(run.optimized_bytes, conv->inputs[1]), DataType::kFloat);
  ExpectCloseOutputs(bytes, run.optimized_bytes, kConvFeeds, 6e-2);
}

// x (half) -> MatMul(W) -> m -> Add(b) -> y, with m a graph output too: half graph inputs and
// outputs keep their type through Casts at the body's edge.
TEST(HalfBodyToFloat, HalfGraphInputsAndOutputsStayHalf) {
  ModelBuilder b;
  b.Input("x", kHalf, {2, 8});
  b.Initializer("W", ToHalf(RandomTensor({8, 5}, 3)));
  b.Initializer("bias", ToHalf(RandomTensor({5}, 4)));
  b.Node("MatMul", {"x", "W"}, {"m"});
  b.Node("Add", {"m", "bias"}, {"y"});
  b.Node("Shape", {"m"}, {"s"});
  b.Output("y", kHalf, {2, 5});
  b.Output("m", kHalf, {2, 5});
  b.Output("s", DataType::kInt64, {2});
  const std::string bytes = b.Bytes();
  auto run = RunFusion(bytes, kPass);
  EXPECT_EQ(run.report.passes.at(0).rewrites, 2);  // MatMul and Add, once (the fixed point holds)
  EXPECT_EQ(OpCount(run.ops_after, "Cast"), 3);    // x in; m and y out
  auto in_cast = FindNode(run.optimized_bytes, "MatMul");
  ASSERT_NE(in_cast, nullptr);
  auto x_cast = ProducerOf(run.optimized_bytes, in_cast->inputs[0]);
  ASSERT_NE(x_cast, nullptr);
  EXPECT_EQ(x_cast->op_type, "Cast");
  EXPECT_EQ(x_cast->inputs[0], "x");
  for (const char* out : {"y", "m"}) {
    auto cast = ProducerOf(run.optimized_bytes, out);
    ASSERT_NE(cast, nullptr) << out;
    EXPECT_EQ(cast->op_type, "Cast") << out;
    EXPECT_EQ(Attr(*cast, "to")->i, static_cast<int64_t>(kHalf)) << out;
  }
  // Shape reads only dims: it reads the float value, with no Cast for it.
  auto shape = FindNode(run.optimized_bytes, "Shape");
  ASSERT_NE(shape, nullptr);
  EXPECT_NE(shape->inputs[0], "m");
  EXPECT_EQ(ProducerOf(run.optimized_bytes, shape->inputs[0])->op_type, "MatMul");
  ExpectCloseOutputs(bytes, run.optimized_bytes, {{"x", ToHalf(RandomTensor({2, 8}, 5))}});
}

// x (half) -> Mul -> Round (not on the list) -> Add -> y: Round stays half between Casts, and
// a Cast(float -> half) whose output other nodes read stays for them.
TEST(HalfBodyToFloat, OpsOffTheListStayHalfBetweenCasts) {
  ModelBuilder b;
  b.Input("x", kHalf, {3, 4});
  b.Initializer("scale", ToHalf(RandomTensor({4}, 6, 1.0f, 4.0f)));
  b.Initializer("bias", ToHalf(RandomTensor({4}, 7)));
  b.Node("Mul", {"x", "scale"}, {"m"});
  b.Node("Round", {"m"}, {"r"});
  b.Node("Add", {"r", "bias"}, {"y"});
  b.Output("y", kHalf, {3, 4});
  const std::string bytes = b.Bytes();
  auto run = RunFusion(bytes, kPass);
  EXPECT_EQ(OpCount(run.ops_after, "Cast"), 4);  // x in, m to half, r to float, y out
  auto round = FindNode(run.optimized_bytes, "Round");
  ASSERT_NE(round, nullptr);
  EXPECT_EQ(round->inputs[0], "m");
  EXPECT_EQ(round->outputs[0], "r");
  auto to_half = ProducerOf(run.optimized_bytes, "m");
  ASSERT_NE(to_half, nullptr);
  EXPECT_EQ(to_half->op_type, "Cast");
  EXPECT_EQ(Attr(*to_half, "to")->i, static_cast<int64_t>(kHalf));
  EXPECT_EQ(ProducerOf(run.optimized_bytes, to_half->inputs[0])->op_type, "Mul");
  auto add = FindNode(run.optimized_bytes, "Add");
  ASSERT_NE(add, nullptr);
  auto to_float = ProducerOf(run.optimized_bytes, add->inputs[0]);
  ASSERT_NE(to_float, nullptr);
  EXPECT_EQ(to_float->op_type, "Cast");
  EXPECT_EQ(to_float->inputs[0], "r");
  ExpectCloseOutputs(bytes, run.optimized_bytes, {{"x", ToHalf(RandomTensor({3, 4}, 8, -3.0f, 3.0f))}});
}

// An int mask cast to half and read by the body becomes one Cast(int -> float).
TEST(HalfBodyToFloat, CastsOfIntegersIntoTheBodyCastToFloat) {
  ModelBuilder b;
  b.Input("mask", DataType::kInt64, {2, 3});
  b.Input("x", DataType::kFloat, {2, 3});
  b.Node("Cast", {"mask"}, {"mh"}).attributes.push_back(IntAttr("to", static_cast<int64_t>(kHalf)));
  b.Node("Cast", {"x"}, {"xh"}).attributes.push_back(IntAttr("to", static_cast<int64_t>(kHalf)));
  b.Node("Mul", {"xh", "mh"}, {"p"});
  b.Node("Cast", {"p"}, {"y"}).attributes.push_back(IntAttr("to", static_cast<int64_t>(DataType::kFloat)));
  b.Output("y", DataType::kFloat, {2, 3});
  const std::string bytes = b.Bytes();
  auto run = RunPasses(bytes, {kPass, "NoOpElimination"});
  EXPECT_EQ(OpCount(run.ops_after, "Cast"), 1);
  auto cast = FindNode(run.optimized_bytes, "Cast");
  ASSERT_NE(cast, nullptr);
  EXPECT_EQ(cast->inputs[0], "mask");
  EXPECT_EQ(Attr(*cast, "to")->i, static_cast<int64_t>(DataType::kFloat));
  Tensor mask(DataType::kInt64, {2, 3});
  for (int64_t i = 0; i < 6; ++i) mask.data<int64_t>()[i] = i % 2;
  ExpectCloseOutputs(bytes, run.optimized_bytes, {{"mask", mask}, {"x", RandomTensor({2, 3}, 9)}});
}

// A body value read by an If's branches stays half for them, under its name. (Inside a
// branch, outer values' types are not inferred: a branch's nodes stay as they are.)
TEST(HalfBodyToFloat, SubgraphsReadHalfValues) {
  ModelBuilder b;
  b.Input("x", kHalf, {2, 3});
  b.Input("cond", DataType::kBool, {});
  b.Node("Relu", {"x"}, {"r"});
  auto branch = [](const std::string& op, const std::string& attr) {
    auto g = std::make_shared<ir::Graph>();
    g->name = op + "_branch";
    auto node = std::make_unique<ir::Node>();
    node->op_type = op;
    node->name = op + "_in_branch";
    node->inputs = {"r"};
    node->outputs = {op + "_out"};
    g->AddNode(std::move(node));
    g->outputs.push_back({op + "_out", ModelBuilder::Type(kHalf, {2, 3}), ""});
    ir::Attribute a{attr, ir::AttrType::kGraph};
    a.g = g;
    return a;
  };
  b.Node("If", {"cond"}, {"picked"}).attributes = {branch("Neg", "then_branch"), branch("Round", "else_branch")};
  b.Output("picked", kHalf, {2, 3});
  const std::string bytes = b.Bytes();
  auto run = RunFusion(bytes, kPass);
  EXPECT_EQ(OpCount(run.ops_after, "Cast"), 2);  // x in, r back to half for the branches
  auto r = ProducerOf(run.optimized_bytes, "r");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->op_type, "Cast");
  EXPECT_EQ(Attr(*r, "to")->i, static_cast<int64_t>(kHalf));
  for (bool cond : {true, false})
    ExpectCloseOutputs(bytes, run.optimized_bytes,
                       {{"x", ToHalf(RandomTensor({2, 3}, 10, -3.0f, 3.0f))},
                        {"cond", Tensor::Scalar<bool>(DataType::kBool, cond)}});
}

// Reshape and Transpose need no float math: alone between half nodes they stay half; next to
// the body they join it.
TEST(HalfBodyToFloat, DataMovementJoinsOnlyNextToTheBody) {
  {
    ModelBuilder b;
    b.Input("x", kHalf, {2, 3});
    b.Node("Transpose", {"x"}, {"y"}).attributes.push_back(IntsAttr("perm", {1, 0}));
    b.Output("y", kHalf, {3, 2});
    auto run = RunFusion(b.Bytes(), kPass);
    EXPECT_EQ(OpCount(run.ops_after, "Cast"), 0);
    EXPECT_EQ(run.report.passes.at(0).rewrites, 0);
  }
  {
    ModelBuilder b;
    b.Input("x", kHalf, {2, 3});
    b.Node("Transpose", {"x"}, {"t"}).attributes.push_back(IntsAttr("perm", {1, 0}));
    b.Node("Sigmoid", {"t"}, {"y"});
    b.Output("y", kHalf, {3, 2});
    const std::string bytes = b.Bytes();
    auto run = RunFusion(bytes, kPass);
    EXPECT_EQ(run.report.passes.at(0).rewrites, 2);
    EXPECT_EQ(OpCount(run.ops_after, "Cast"), 2);
    auto transpose = FindNode(run.optimized_bytes, "Transpose");
    ASSERT_NE(transpose, nullptr);
    EXPECT_EQ(ProducerOf(run.optimized_bytes, transpose->inputs[0])->op_type, "Cast");
    ExpectCloseOutputs(bytes, run.optimized_bytes, {{"x", ToHalf(RandomTensor({2, 3}, 11))}});
  }
}

// Float models are left alone, and the pass runs at the basic level under its name.
TEST(HalfBodyToFloat, RunsAtBasicAndLeavesFloatModelsAlone) {
  ModelBuilder f;
  f.Input("x", DataType::kFloat, {2, 3});
  f.Node("Relu", {"x"}, {"y"});
  f.Output("y", DataType::kFloat, {2, 3});
  EXPECT_EQ(RunFusion(f.Bytes(), kPass).report.passes.at(0).rewrites, 0);

  const std::string bytes = CastWrappedConv(kHalf).Bytes();
  auto model = LoadModelFromBytes(bytes.data(), bytes.size());
  OptimizerOptions options;
  options.level = OptLevel::kBasic;
  const OptimizationReport report = OptimizeModel(*model, options);
  EXPECT_NE(report.ToString().find(std::string(kPass) + ": 2 rewrites"), std::string::npos) << report.ToString();
  EXPECT_EQ(OpCount(CountOps(*model->graph), "Cast"), 0);
}

// A session with another provider than the CPU keeps half bodies for that provider's kernels.
TEST(HalfBodyToFloat, OnlyForCpuSessions) {
  const std::string bytes = CastWrappedConv(kHalf).Bytes();
  EXPECT_EQ(RunPasses(bytes, {kPass}, OptLevel::kAll, {"CUDA", "CPU"}).report.passes.at(0).rewrites, 0);
  EXPECT_EQ(RunPasses(bytes, {kPass}, OptLevel::kAll, {"CPU"}).report.passes.at(0).rewrites, 2);
}

}  // namespace
}  // namespace onyx
