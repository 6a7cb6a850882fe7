// MatMulAddFusion: MatMul + Add(bias) to Gemm (2-D), Reshape/Gemm/Reshape (static higher rank).
#include "optimizer/fusion_test_util.h"

namespace onyx {
namespace {

using namespace test;

std::string MatMulAdd(const std::vector<int64_t>& a_dims, const Shape& bias_shape, bool bias_first,
                      bool extra_reader = false) {
  std::vector<int64_t> mm_dims = a_dims;
  mm_dims.back() = 5;
  std::vector<int64_t> y_dims = mm_dims;  // numpy broadcast with the bias
  if (bias_shape.size() > y_dims.size()) y_dims.insert(y_dims.begin(), bias_shape.size() - y_dims.size(), 1);
  for (size_t i = 0; i < bias_shape.size(); ++i) {
    int64_t& d = y_dims[y_dims.size() - bias_shape.size() + i];
    if (d == 1) d = bias_shape[i];
  }
  ModelBuilder b;
  b.Input("a", DataType::kFloat, a_dims);
  b.Initializer("w", RandomTensor({8, 5}, 1)).Initializer("bias", RandomTensor(bias_shape, 2));
  b.Node("MatMul", {"a", "w"}, {"mm"});
  b.Node("Add", bias_first ? std::vector<std::string>{"bias", "mm"} : std::vector<std::string>{"mm", "bias"}, {"y"});
  b.Output("y", DataType::kFloat, y_dims);
  if (extra_reader) {
    b.Node("Relu", {"mm"}, {"r"});
    b.Output("r", DataType::kFloat, mm_dims);
  }
  return b.Bytes();
}

TEST(MatMulAddFusion, Makes2DMatMulAndBiasAGemm) {
  for (bool bias_first : {false, true}) {
    for (const Shape& bias : std::vector<Shape>{{5}, {1, 5}, {3, 5}, {3, 1}}) {
      const std::string bytes = MatMulAdd({3, 8}, bias, bias_first);
      auto run = RunFusion(bytes, "MatMulAddFusion");
      EXPECT_EQ(OpCount(run.ops_after, "MatMul"), 0) << ShapeToString(bias);
      EXPECT_EQ(OpCount(run.ops_after, "Add"), 0);
      auto gemm = FindNode(run.optimized_bytes, "Gemm");
      ASSERT_NE(gemm, nullptr);
      EXPECT_EQ(gemm->inputs, (std::vector<std::string>{"a", "w", "bias"}));
      EXPECT_EQ(gemm->outputs[0], "y");
      ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes, {{"a", RandomTensor({3, 8}, 3)}});
    }
  }
}

TEST(MatMulAddFusion, ReshapesAStaticHigherRankInputAroundTheGemm) {
  const std::string bytes = MatMulAdd({2, 3, 8}, {5}, true);
  auto run = RunFusion(bytes, "MatMulAddFusion");
  EXPECT_EQ(OpCount(run.ops_after, "MatMul"), 0);
  EXPECT_EQ(OpCount(run.ops_after, "Gemm"), 1);
  EXPECT_EQ(OpCount(run.ops_after, "Reshape"), 2);
  ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes, {{"a", RandomTensor({2, 3, 8}, 3)}});
}

TEST(MatMulAddFusion, LeavesSymbolicShapesExtraReadersAndWideBiases) {
  // A symbolic batch dim: ONNX Runtime keeps MatMul + Add (BiasGelu/SkipLayerNorm take the bias).
  auto run = RunFusion(MatMulAdd({-1, 3, 8}, {5}, false), "MatMulAddFusion");
  EXPECT_EQ(OpCount(run.ops_after, "MatMul"), 1);
  // The MatMul result is read elsewhere too.
  run = RunFusion(MatMulAdd({3, 8}, {5}, false, true), "MatMulAddFusion");
  EXPECT_EQ(OpCount(run.ops_after, "MatMul"), 1);
  // A bias Gemm cannot broadcast (it would widen the output), and a 2-D bias for 3-D input.
  run = RunFusion(MatMulAdd({3, 8}, {2, 3, 5}, false), "MatMulAddFusion");
  EXPECT_EQ(OpCount(run.ops_after, "MatMul"), 1);
  run = RunFusion(MatMulAdd({2, 3, 8}, {3, 5}, false), "MatMulAddFusion");
  EXPECT_EQ(OpCount(run.ops_after, "MatMul"), 1);
}

TEST(MatMulAddFusion, LeavesIntegerMatMuls) {
  ModelBuilder b;
  b.Input("a", DataType::kInt32, {3, 8}).Input("w", DataType::kInt32, {8, 5}).Input("bias", DataType::kInt32, {5});
  b.Node("MatMul", {"a", "w"}, {"mm"});
  b.Node("Add", {"mm", "bias"}, {"y"});
  b.Output("y", DataType::kInt32, {3, 5});
  auto run = RunFusion(b.Bytes(), "MatMulAddFusion");
  EXPECT_EQ(OpCount(run.ops_after, "MatMul"), 1);
}

}  // namespace
}  // namespace onyx
