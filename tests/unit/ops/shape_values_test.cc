// Shape values: Reshape/Expand/Range whose shape or length is computed from other values' dims
// (as exporters write them) keep the batch and sequence symbols.
// GCC 12 reports a -Wrestrict false positive in std::string concatenation inlined from
// ModelBuilder::Type when inputs have symbolic dims.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

#include <gtest/gtest.h>

#include "model_builder.h"
#include "infer_test_util.h"
#include "onnx/model_loader.h"
#include "ops/shape_inference.h"

namespace onyx {
namespace {

using test::Infer;
using test::TypeOf;

Tensor Ints(std::vector<int64_t> v) {
  return Tensor::FromVector<int64_t>(DataType::kInt64, {static_cast<int64_t>(v.size())}, v);
}

Tensor Int(int64_t v) { return Tensor::Scalar<int64_t>(DataType::kInt64, v); }

// Unsqueeze(Gather(Shape(x), i), 0): x.size(i) as a 1-element tensor.
std::string DynDim(test::ModelBuilder& b, const std::string& x, int64_t i) {
  const std::string s = x + "_shape", idx = x + "_i" + std::to_string(i), g = x + "_g" + std::to_string(i);
  const std::string u = x + "_u" + std::to_string(i);
  if (b.model().graph->initializers.count("zero") == 0) b.Initializer("zero", Ints({0}));
  bool has_shape = false;
  for (const auto& n : b.model().graph->nodes)
    if (n->outputs[0] == s) has_shape = true;
  if (!has_shape) b.Node("Shape", {x}, {s});
  b.Initializer(idx, Int(i));
  b.Node("Gather", {s, idx}, {g});
  b.Node("Unsqueeze", {g, "zero"}, {u});
  return u;
}

TEST(ShapeValues, ReshapeToComputedDimsKeepsSymbols) {
  // BERT's head merge: x.view(x.size(0), x.size(1), 768), and a -1 the other dims account for.
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {-1, -1, 12, 64});
  b.Output("merged", DataType::kFloat, {-1, -1, 768}).Output("flat", DataType::kFloat, {-1, 768});
  b.Initializer("hidden", Ints({768})).Initializer("minus_one", Ints({-1}));
  const std::string d0 = DynDim(b, "x", 0), d1 = DynDim(b, "x", 1);
  b.Node("Concat", {d0, d1, "hidden"}, {"shape"}).attributes.push_back({"axis", ir::AttrType::kInt});
  b.Node("Reshape", {"x", "shape"}, {"merged"});
  b.Node("Concat", {"minus_one", "hidden"}, {"shape2"}).attributes.push_back({"axis", ir::AttrType::kInt});
  b.Node("Reshape", {"merged", "shape2"}, {"flat"});
  const auto types = Infer(b);
  EXPECT_EQ(TypeOf(types, "merged"), "tensor(float)[d0,d1,768]");
  EXPECT_EQ(TypeOf(types, "flat"), "tensor(float)[?,768]");  // d0*d1 is no single dim
}

TEST(ShapeValues, MinusOneIsTheDimTheOthersLeave) {
  // GPT-2: input_ids.view(-1, input_ids.size(-1)).
  test::ModelBuilder b;
  b.Input("ids", DataType::kInt64, {-1, -1}).Output("r", DataType::kInt64, {-1, -1});
  b.Initializer("minus_one", Ints({-1}));
  const std::string d1 = DynDim(b, "ids", 1);
  b.Node("Concat", {"minus_one", d1}, {"shape"}).attributes.push_back({"axis", ir::AttrType::kInt});
  b.Node("Reshape", {"ids", "shape"}, {"r"});
  EXPECT_EQ(TypeOf(Infer(b), "r"), "tensor(int64)[d0,d1]");
}

TEST(ShapeValues, RangeOverASequenceLength) {
  test::ModelBuilder b;
  b.Input("ids", DataType::kInt64, {-1, -1}).Output("pos", DataType::kInt64, {-1});
  b.Initializer("start", Int(0)).Initializer("delta", Int(1));
  b.Node("Shape", {"ids"}, {"s"});
  b.Initializer("one", Int(1));
  b.Node("Gather", {"s", "one"}, {"len"});
  b.Node("Range", {"start", "len", "delta"}, {"pos"});
  EXPECT_EQ(TypeOf(Infer(b), "pos"), "tensor(int64)[d1]");
}

TEST(ShapeValues, ExpandWithTheExportersMinusOneDance) {
  // cls_token.expand(batch, -1, -1): Where(Equal(size, -1), 1, size).
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {-1, 3, 8, 8}).Output("e", DataType::kFloat, {-1, 1, 16});
  b.Initializer("cls", test::FloatTensor({1, 1, 16})).Initializer("minus_ones", Ints({-1, -1, -1}));
  b.Initializer("ones", Ints({1, 1, 1})).Initializer("minus_one", Ints({-1}));
  const std::string d0 = DynDim(b, "x", 0);
  b.Node("Concat", {d0, "minus_one", "minus_one"}, {"size"}).attributes.push_back({"axis", ir::AttrType::kInt});
  b.Node("Equal", {"size", "minus_ones"}, {"eq"});
  b.Node("Where", {"eq", "ones", "size"}, {"target"});
  b.Node("Expand", {"cls", "target"}, {"e"});
  EXPECT_EQ(TypeOf(Infer(b), "e"), "tensor(float)[d0,1,16]");
}

TEST(ShapeValues, UnknownPiecesStayUnknown) {
  // A piece fed at run time: only the rank and the constant dims are known.
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {-1, 64}).Input("n", DataType::kInt64, {1});
  b.Output("r", DataType::kFloat, {-1, -1, 8});
  b.Initializer("eight", Ints({8}));
  b.Node("Concat", {"n", "n", "eight"}, {"shape"}).attributes.push_back({"axis", ir::AttrType::kInt});
  b.Node("Reshape", {"x", "shape"}, {"r"});
  EXPECT_EQ(TypeOf(Infer(b), "r"), "tensor(float)[?,?,8]");
}

}  // namespace
}  // namespace onyx
