// The fusion passes infer the graph's types a bounded number of times, however many rewrites
// they make: inferring the whole graph after each rewrite made them quadratic (a 96-layer BERT
// took 2.3 s to optimize, a 1000-block chain 30 s). Counted, not timed.
#include <string>

#include "optimizer/fusion_test_util.h"

namespace onyx {
namespace {

using namespace test;

constexpr int kBlocks = 150;
constexpr float kSqrt2 = 1.41421356f;

// kBlocks of: h -> MatMul + Add(bias) -> erf Gelu -> MatMul + Add(bias) -> Add(h) ->
// LayerNormalization -> next h, over a symbolic batch (so MatMul + Add stay for BiasGelu and
// SkipLayerNormalization to take).
std::string DeepBlocks() {
  ModelBuilder b;
  b.Input("h0", DataType::kFloat, {-1, 4, 8});
  b.Initializer("sqrt2", Scalar(kSqrt2)).Initializer("one", Scalar(1.0f)).Initializer("half", Scalar(0.5f));
  b.Initializer("gamma", RandomTensor({8}, 1)).Initializer("beta", RandomTensor({8}, 2));
  for (int i = 0; i < kBlocks; ++i) {
    const std::string s = std::to_string(i), h = "h" + s, next = "h" + std::to_string(i + 1);
    b.Initializer("w1_" + s, RandomTensor({8, 8}, 10 + 4 * i)).Initializer("b1_" + s, RandomTensor({8}, 11 + 4 * i));
    b.Initializer("w2_" + s, RandomTensor({8, 8}, 12 + 4 * i)).Initializer("b2_" + s, RandomTensor({8}, 13 + 4 * i));
    b.Node("MatMul", {h, "w1_" + s}, {"m1_" + s});
    b.Node("Add", {"m1_" + s, "b1_" + s}, {"x_" + s});
    b.Node("Div", {"x_" + s, "sqrt2"}, {"d_" + s});
    b.Node("Erf", {"d_" + s}, {"e_" + s});
    b.Node("Add", {"e_" + s, "one"}, {"a_" + s});
    b.Node("Mul", {"x_" + s, "a_" + s}, {"p_" + s});
    b.Node("Mul", {"p_" + s, "half"}, {"g_" + s});
    b.Node("MatMul", {"g_" + s, "w2_" + s}, {"m2_" + s});
    b.Node("Add", {"m2_" + s, "b2_" + s}, {"y_" + s});
    b.Node("Add", {"y_" + s, h}, {"r_" + s});
    b.Node("LayerNormalization", {"r_" + s, "gamma", "beta"}, {next}).attributes.push_back(IntAttr("axis", -1));
  }
  b.Output("h" + std::to_string(kBlocks), DataType::kFloat, {-1, 4, 8});
  return b.Bytes();
}

TEST(PassTypeInferenceCost, FusionsInferTypesABoundedNumberOfTimes) {
  const std::string bytes = DeepBlocks();
  auto run = RunPasses(bytes, {"GeluFusion", "BiasGeluFusion", "SkipLayerNormFusion", "MatMulAddFusion",
                               "MatMulScaleFusion"});
  EXPECT_EQ(OpCount(run.ops_after, "com.microsoft.BiasGelu"), kBlocks);
  EXPECT_EQ(OpCount(run.ops_after, "com.microsoft.SkipLayerNormalization"), kBlocks);
  for (const auto& pass : run.report.passes) {
    SCOPED_TRACE(pass.name + ": " + std::to_string(pass.rewrites) + " rewrites");
    // At most one inference per round and a final one; the rounds end when nothing changes.
    EXPECT_LE(pass.type_inferences, 10);
  }
  // `onyx optimize --report` names the passes that inferred, most first.
  EXPECT_NE(run.report.ToString().find("whole-graph type inferences: "), std::string::npos) << run.report.ToString();
  ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes, {{"h0", RandomTensor({2, 4, 8}, 7)}});
}

}  // namespace
}  // namespace onyx
