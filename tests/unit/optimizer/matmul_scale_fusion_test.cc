// MatMulScaleFusion: constant scalar scales and last-two-dims transposes into FusedMatMul.
#include "optimizer/fusion_test_util.h"

namespace onyx {
namespace {

using namespace test;

const NamedValues kFeeds = {{"a", RandomTensor({2, 4, 8}, 1)}, {"b", RandomTensor({2, 8, 3}, 2)}};

ModelBuilder Inputs() {
  ModelBuilder b;
  b.Input("a", DataType::kFloat, {2, 4, 8}).Input("b", DataType::kFloat, {2, 8, 3});
  return b;
}

TEST(MatMulScaleFusion, FoldsAnOutputDivOrMulIntoAlpha) {
  for (const char* op : {"Div", "Mul"}) {
    ModelBuilder b = Inputs();
    b.Initializer("s", Scalar(8.0f));
    b.Node("MatMul", {"a", "b"}, {"mm"});
    b.Node(op, {"mm", "s"}, {"y"});
    b.Output("y", DataType::kFloat, {2, 4, 3});
    const std::string bytes = b.Bytes();
    auto run = RunFusion(bytes, "MatMulScaleFusion");
    auto fused = FindNode(run.optimized_bytes, "FusedMatMul", "com.microsoft");
    ASSERT_NE(fused, nullptr) << op;
    EXPECT_FLOAT_EQ(Attr(*fused, "alpha")->f, std::string(op) == "Div" ? 0.125f : 8.0f);
    EXPECT_EQ(Attr(*fused, "transB")->i, 0);
    EXPECT_EQ(fused->outputs[0], "y");
    EXPECT_EQ(OpCount(run.ops_after, op), 0);
    ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes, kFeeds);
  }
}

TEST(MatMulScaleFusion, FoldsInputScalesAndTransposes) {
  ModelBuilder b;
  b.Input("a", DataType::kFloat, {2, 4, 8}).Input("bt", DataType::kFloat, {2, 3, 8});
  b.Initializer("s", Scalar(0.5f)).Initializer("t", Scalar(4.0f));
  b.Node("Mul", {"s", "a"}, {"as"});
  b.Node("Transpose", {"bt"}, {"b"}).attributes.push_back(IntsAttr("perm", {0, 2, 1}));
  b.Node("Div", {"b", "t"}, {"bs"});
  b.Node("MatMul", {"as", "bs"}, {"y"});
  b.Output("y", DataType::kFloat, {2, 4, 3});
  const std::string bytes = b.Bytes();
  auto run = RunFusion(bytes, "MatMulScaleFusion");
  EXPECT_EQ(OpCount(run.ops_after, "Mul"), 0);
  EXPECT_EQ(OpCount(run.ops_after, "Div"), 0);
  EXPECT_EQ(OpCount(run.ops_after, "Transpose"), 0);
  auto fused = FindNode(run.optimized_bytes, "FusedMatMul", "com.microsoft");
  ASSERT_NE(fused, nullptr);
  EXPECT_EQ(fused->inputs, (std::vector<std::string>{"a", "bt"}));
  EXPECT_FLOAT_EQ(Attr(*fused, "alpha")->f, 0.125f);
  EXPECT_EQ(Attr(*fused, "transA")->i, 0);
  EXPECT_EQ(Attr(*fused, "transB")->i, 1);
  ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes,
                                {{"a", RandomTensor({2, 4, 8}, 1)}, {"bt", RandomTensor({2, 3, 8}, 2)}});
}

TEST(MatMulScaleFusion, LeavesRuntimeScalesOtherTransposesAndSharedValues) {
  {  // the scale is fed at run time
    ModelBuilder b = Inputs();
    b.Input("s", DataType::kFloat, {});
    b.Node("MatMul", {"a", "b"}, {"mm"});
    b.Node("Mul", {"mm", "s"}, {"y"});
    b.Output("y", DataType::kFloat, {2, 4, 3});
    auto run = RunFusion(b.Bytes(), "MatMulScaleFusion");
    EXPECT_EQ(OpCount(run.ops_after, "MatMul"), 1);
  }
  {  // a per-column scale is no scalar
    ModelBuilder b = Inputs();
    b.Initializer("s", RandomTensor({3}, 5));
    b.Node("MatMul", {"a", "b"}, {"mm"});
    b.Node("Mul", {"mm", "s"}, {"y"});
    b.Output("y", DataType::kFloat, {2, 4, 3});
    auto run = RunFusion(b.Bytes(), "MatMulScaleFusion");
    EXPECT_EQ(OpCount(run.ops_after, "MatMul"), 1);
  }
  {  // a transpose of the batch dims, and a scaled input read elsewhere
    ModelBuilder b;
    b.Input("a", DataType::kFloat, {4, 2, 8}).Input("b", DataType::kFloat, {2, 8, 3});
    b.Initializer("s", Scalar(2.0f));
    b.Node("Transpose", {"a"}, {"at"}).attributes.push_back(IntsAttr("perm", {1, 0, 2}));
    b.Node("Mul", {"b", "s"}, {"bs"});
    b.Node("MatMul", {"at", "bs"}, {"y"});
    b.Output("y", DataType::kFloat, {2, 4, 3}).Output("bs", DataType::kFloat, {2, 8, 3});
    auto run = RunFusion(b.Bytes(), "MatMulScaleFusion");
    EXPECT_EQ(OpCount(run.ops_after, "MatMul"), 1);
  }
  {  // a scalar of higher rank would broadcast the result to rank 4
    ModelBuilder b = Inputs();
    b.Initializer("s", RandomTensor({1, 1, 1, 1}, 5));
    b.Node("MatMul", {"a", "b"}, {"mm"});
    b.Node("Mul", {"mm", "s"}, {"y"});
    b.Output("y", DataType::kFloat, {1, 2, 4, 3});
    auto run = RunFusion(b.Bytes(), "MatMulScaleFusion");
    EXPECT_EQ(OpCount(run.ops_after, "MatMul"), 1);
  }
}

TEST(MatMulScaleFusion, ExtendsAFusedMatMul) {
  ModelBuilder b = Inputs();
  b.model().opset_imports["com.microsoft"] = 1;
  b.Initializer("s", Scalar(2.0f));
  auto& fm = b.Node("FusedMatMul", {"a", "b"}, {"mm"}, "com.microsoft");
  fm.attributes.push_back(FloatAttr("alpha", 0.5f));
  b.Node("Mul", {"mm", "s"}, {"y"});
  b.Output("y", DataType::kFloat, {2, 4, 3});
  auto run = RunFusion(b.Bytes(), "MatMulScaleFusion");
  EXPECT_EQ(OpCount(run.ops_after, "Mul"), 0);
  auto fused = FindNode(run.optimized_bytes, "FusedMatMul", "com.microsoft");
  ASSERT_NE(fused, nullptr);
  EXPECT_FLOAT_EQ(Attr(*fused, "alpha")->f, 1.0f);
}

}  // namespace
}  // namespace onyx
