// Shape rules on graphs the loader accepts but whose shapes are inconsistent (found by the
// model-mutation campaign, tests/fuzz/mutate_models.py): inference leaves the output unknown
// instead of reading out of bounds; the kernel reports the problem at run time.
#include <gtest/gtest.h>

#include "infer_test_util.h"
#include "model_builder.h"

namespace onyx {
namespace {

using test::Infer;
using test::TypeOf;

Tensor Ints(std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::FromVector<int64_t>(DataType::kInt64, {n}, v);
}

TEST(MalformedInputRules, ConcatOfInputsWithDifferentRanks) {
  test::ModelBuilder b;
  b.Input("a", DataType::kFloat, {2, 3, 4}).Input("b", DataType::kFloat, {5}).Output("y", DataType::kFloat, {});
  b.Node("Concat", {"a", "b"}, {"y"}).attributes.push_back(test::IntAttr("axis", 2));
  EXPECT_EQ(TypeOf(Infer(b), "y"), "tensor(float)[2,3,?]");
}

TEST(MalformedInputRules, UnsqueezeWithARepeatedAxis) {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {3}).Output("y", DataType::kFloat, {});
  b.Initializer("axes", Ints({0, 0}));
  b.Node("Unsqueeze", {"x", "axes"}, {"t"});
  b.Node("Identity", {"t"}, {"y"});
  EXPECT_EQ(TypeOf(Infer(b), "t"), "none");
}

TEST(MalformedInputRules, SliceWithArgumentsOfDifferentLengths) {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {4, 5}).Output("y", DataType::kFloat, {});
  b.Initializer("starts", Ints({0, 0, 0}));
  b.Initializer("ends", Ints({1}));
  b.Initializer("axes", Ints({0, 1}));
  b.Node("Slice", {"x", "starts", "ends", "axes"}, {"y"});
  EXPECT_EQ(TypeOf(Infer(b), "y"), "tensor(float)[?,?]");
}

TEST(MalformedInputRules, SliceWithMoreStartsThanTheRank) {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {4}).Output("y", DataType::kFloat, {});
  b.Initializer("starts", Ints({0, 0, 0}));
  b.Initializer("ends", Ints({1, 1, 1}));
  b.Node("Slice", {"x", "starts", "ends"}, {"y"});
  EXPECT_EQ(TypeOf(Infer(b), "y"), "tensor(float)[?]");
}

TEST(MalformedInputRules, TileWithTooFewRepeats) {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {2, 3, 4}).Output("y", DataType::kFloat, {});
  b.Initializer("repeats", Ints({2}));
  b.Node("Tile", {"x", "repeats"}, {"y"});
  EXPECT_EQ(TypeOf(Infer(b), "y"), "tensor(float)[?,?,?]");
}

TEST(MalformedInputRules, FlattenAxisOutOfRange) {
  for (int64_t axis : {int64_t{5}, int64_t{-7}, int64_t{1} << 40}) {
    test::ModelBuilder b;
    b.Input("x", DataType::kFloat, {2, 3}).Output("y", DataType::kFloat, {});
    b.Node("Flatten", {"x"}, {"t"}).attributes.push_back(test::IntAttr("axis", axis));
    b.Node("Identity", {"t"}, {"y"});
    EXPECT_EQ(TypeOf(Infer(b), "t"), "none") << axis;
  }
}

TEST(MalformedInputRules, ReshapeToAHugeRankIsUnknown) {
  // The shape input declares 2^31 elements: its length is not taken as the output's rank.
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {2, 3}).Input("shape", DataType::kInt64, {int64_t{1} << 31});
  b.Output("y", DataType::kFloat, {});
  b.Node("Reshape", {"x", "shape"}, {"t"});
  b.Node("Identity", {"t"}, {"y"});
  EXPECT_EQ(TypeOf(Infer(b), "t"), "tensor(float)");
}

TEST(MalformedInputRules, ExtremeAxesAreOutOfRange) {
  for (const char* op : {"Concat", "Gather", "Split", "Softmax"}) {
    test::ModelBuilder b;
    b.Input("x", DataType::kFloat, {2, 3}).Input("i", DataType::kInt64, {1}).Output("y", DataType::kFloat, {});
    std::vector<std::string> inputs = {"x"};
    if (std::string(op) == "Gather") inputs.push_back("i");
    b.Node(op, inputs, {"t"}).attributes.push_back(test::IntAttr("axis", -(int64_t{1} << 62)));
    b.Node("Identity", {"t"}, {"y"});
    EXPECT_EQ(TypeOf(Infer(b), "t"), std::string(op) == "Softmax" ? "tensor(float)[2,3]" : "none") << op;
  }
}

}  // namespace
}  // namespace onyx
