// Tests of the basic passes that remove no-op and redundant shape operations.
#include "optimizer/pass_test_util.h"

namespace onyx {
namespace {

using test::IntsAttr;
using test::IntAttr;

using test::ExpectSameOutputs;
using test::FloatTensor;
using test::ModelBuilder;
using test::OpCount;
using test::RunPassAlone;

Tensor Ints(std::vector<int64_t> v) {
  return Tensor::FromVector<int64_t>(DataType::kInt64, {static_cast<int64_t>(v.size())}, v);
}

TEST(NoOpElimination, RemovesReshapeCastTransposeSliceThatChangeNothing) {
  ModelBuilder b;
  b.Input("x", DataType::kFloat, {2, 3, 4}).Output("y", DataType::kFloat, {2, 3, 4});
  b.Initializer("same_shape", Ints({0, 3, 4}));
  b.Initializer("starts", Ints({0})).Initializer("ends", Ints({100})).Initializer("axes", Ints({1}));
  b.Node("Reshape", {"x", "same_shape"}, {"a"});
  b.Node("Cast", {"a"}, {"c"}).attributes.push_back(IntAttr("to", 1));
  b.Node("Transpose", {"c"}, {"t"}).attributes.push_back(IntsAttr("perm", {0, 1, 2}));
  b.Node("Slice", {"t", "starts", "ends", "axes"}, {"s"});
  b.Node("Add", {"s", "x"}, {"y"});
  const std::string bytes = b.Bytes();
  auto run = RunPassAlone(bytes, "NoOpElimination");
  EXPECT_EQ(OpCount(run.ops_after, "Reshape"), 0);
  EXPECT_EQ(OpCount(run.ops_after, "Cast"), 0);
  EXPECT_EQ(OpCount(run.ops_after, "Transpose"), 0);
  EXPECT_EQ(OpCount(run.ops_after, "Slice"), 0);
  ExpectSameOutputs(bytes, run.optimized_bytes, {{"x", FloatTensor({2, 3, 4}, -2.0f, 0.25f)}});
}

TEST(NoOpElimination, KeepsOpsThatDoSomething) {
  ModelBuilder b;
  b.Input("x", DataType::kFloat, {2, 3}).Output("y", DataType::kFloat, {3, 2}).Output("z", DataType::kInt32, {2, 3});
  b.Initializer("shape", Ints({3, 2}));
  b.Node("Reshape", {"x", "shape"}, {"y"});
  b.Node("Cast", {"x"}, {"z"}).attributes.push_back(IntAttr("to", 6));
  auto run = RunPassAlone(b.Bytes(), "NoOpElimination");
  EXPECT_EQ(OpCount(run.ops_after, "Reshape"), 1);
  EXPECT_EQ(OpCount(run.ops_after, "Cast"), 1);
}

TEST(TransposeFusion, MergesAndCancelsTransposes) {
  ModelBuilder b;
  b.Input("x", DataType::kFloat, {2, 3, 4}).Output("y", DataType::kFloat, {4, 2, 3}).Output("z", DataType::kFloat, {2, 3, 4});
  b.Node("Transpose", {"x"}, {"t1"}).attributes.push_back(IntsAttr("perm", {1, 0, 2}));
  b.Node("Transpose", {"t1"}, {"y"}).attributes.push_back(IntsAttr("perm", {2, 1, 0}));
  b.Node("Transpose", {"x"}, {"u1"}).attributes.push_back(IntsAttr("perm", {0, 2, 1}));
  b.Node("Transpose", {"u1"}, {"u2"}).attributes.push_back(IntsAttr("perm", {0, 2, 1}));
  b.Node("Add", {"u2", "x"}, {"z"});
  const std::string bytes = b.Bytes();
  auto run = RunPassAlone(bytes, "TransposeFusion");
  EXPECT_EQ(OpCount(run.ops_after, "Transpose"), 1);
  ExpectSameOutputs(bytes, run.optimized_bytes, {{"x", FloatTensor({2, 3, 4})}});
}

TEST(CastChainElimination, DropsLosslessIntermediateCasts) {
  ModelBuilder b;
  b.Input("x", DataType::kInt32, {4}).Output("y", DataType::kFloat, {4}).Output("z", DataType::kInt8, {4});
  b.Node("Cast", {"x"}, {"wide"}).attributes.push_back(IntAttr("to", 7));  // int32 -> int64: lossless
  b.Node("Cast", {"wide"}, {"y"}).attributes.push_back(IntAttr("to", 1));
  b.Node("Cast", {"x"}, {"narrow"}).attributes.push_back(IntAttr("to", 5));  // int32 -> int16: lossy
  b.Node("Cast", {"narrow"}, {"z"}).attributes.push_back(IntAttr("to", 3));
  const std::string bytes = b.Bytes();
  auto run = RunPassAlone(bytes, "CastChainElimination");
  EXPECT_EQ(OpCount(run.ops_after, "Cast"), 3);
  ExpectSameOutputs(bytes, run.optimized_bytes,
                    {{"x", Tensor::FromVector<int32_t>(DataType::kInt32, {4}, {-70000, -3, 5, 40000})}});
}

TEST(UnsqueezeSqueezeElimination, RemovesMatchingPairs) {
  ModelBuilder b;
  b.Input("x", DataType::kFloat, {2, 3}).Output("y", DataType::kFloat, {2, 3});
  b.Initializer("axes", Ints({-1, 0}));
  b.Initializer("axes2", Ints({0, 3}));
  b.Node("Unsqueeze", {"x", "axes"}, {"u"});
  b.Node("Squeeze", {"u", "axes2"}, {"s"});
  b.Node("Add", {"s", "x"}, {"y"});
  const std::string bytes = b.Bytes();
  auto run = RunPassAlone(bytes, "UnsqueezeSqueezeElimination");
  EXPECT_EQ(OpCount(run.ops_after, "Unsqueeze"), 0);
  EXPECT_EQ(OpCount(run.ops_after, "Squeeze"), 0);
  ExpectSameOutputs(bytes, run.optimized_bytes, {{"x", FloatTensor({2, 3})}});
}

TEST(CommonSubexpressionElimination, MergesEqualNodesAndConstants) {
  ModelBuilder b;
  b.Input("x", DataType::kFloat, {3}).Output("y", DataType::kFloat, {3});
  b.Initializer("c1", FloatTensor({3}, 1.0f)).Initializer("c2", FloatTensor({3}, 1.0f));
  b.Node("Add", {"x", "c1"}, {"a1"});
  b.Node("Add", {"x", "c2"}, {"a2"});  // same as a1 once c2 merges into c1
  b.Node("Mul", {"a1", "a2"}, {"y"});
  const std::string bytes = b.Bytes();
  auto run = RunPassAlone(bytes, "CommonSubexpressionElimination");
  EXPECT_EQ(OpCount(run.ops_after, "Add"), 1);
  ExpectSameOutputs(bytes, run.optimized_bytes, {{"x", FloatTensor({3}, 0.5f)}});
}

TEST(ShapeFolding, FoldsStaticShapesAndGathersOfKnownDims) {
  ModelBuilder b;
  b.Input("x", DataType::kFloat, {-1, 3, 4}).Output("g", DataType::kInt64, {}).Output("s", DataType::kInt64, {3});
  b.Output("n", DataType::kInt64, {});
  b.Initializer("two", Tensor::Scalar<int64_t>(DataType::kInt64, 2));
  b.Node("Shape", {"x"}, {"shape"});
  b.Node("Gather", {"shape", "two"}, {"g"});  // dim 2 is known although dim 0 is not
  b.Node("Shape", {"x"}, {"s"});              // not static: stays
  b.Node("Size", {"x"}, {"n"});               // not static: stays
  const std::string bytes = b.Bytes();
  auto run = RunPassAlone(bytes, "ShapeFolding");
  EXPECT_EQ(OpCount(run.ops_after, "Gather"), 0);
  EXPECT_EQ(OpCount(run.ops_after, "Shape"), 2);  // the Gather's Shape is dead now; DCE removes it
  EXPECT_EQ(OpCount(run.ops_after, "Size"), 1);
  ExpectSameOutputs(bytes, run.optimized_bytes, {{"x", FloatTensor({5, 3, 4})}});
}

}  // namespace
}  // namespace onyx
