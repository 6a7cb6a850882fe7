// Shape rules and shape-value propagation on inputs the shape-inference fuzz harness
// (tests/fuzz/shape_inference_fuzzer.cc) found crashing; each input is also kept in
// tests/fuzz/regressions/shape_inference/. Inference leaves what it cannot compute unknown.
#include <gtest/gtest.h>

#include "ops/shape_inference.h"

namespace onyx {
namespace {

std::shared_ptr<const TypeInfo> Int64Vector(int64_t n) {
  return TypeInfo::Tensor(DataType::kInt64, std::vector<Dim>{Dim{n, ""}});
}

// Runs `op`'s rule and the value propagation on two int64 vectors with known elements.
std::optional<std::vector<Dim>> ValuesOf(const std::string& op, const std::vector<Dim>& a, const std::vector<Dim>& b) {
  ir::Node node;
  node.op_type = op;
  node.opset = 17;
  node.inputs = {"a", "b"};
  node.outputs = {"y"};
  InferenceContext ctx(node, {Int64Vector(static_cast<int64_t>(a.size())), Int64Vector(static_cast<int64_t>(b.size()))},
                       {nullptr, nullptr});
  ctx.set_input_values({&a, &b});
  (*FindInferenceRule("", op))(ctx);
  return PropagateShapeValues(ctx)[0];
}

TEST(FuzzFoundRules, ArithmeticOnAnEmptyAndALengthOneValueReadsNothing) {
  // Used to read element 0 of the empty operand.
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Equal"}) {
    EXPECT_FALSE(ValuesOf(op, {}, {Dim{3, ""}}).has_value()) << op;
    EXPECT_FALSE(ValuesOf(op, {Dim{3, ""}}, {}).has_value()) << op;
  }
  // Broadcasting a length-1 value still works.
  const auto sum = ValuesOf("Add", {Dim{2, ""}, Dim{-1, "batch"}}, {Dim{0, ""}});
  ASSERT_TRUE(sum.has_value());
  EXPECT_EQ((*sum)[0], (Dim{2, ""}));
  EXPECT_EQ((*sum)[1], (Dim{-1, "batch"}));
}

TEST(FuzzFoundRules, ArithmeticThatOverflowsIsUnknown) {
  // Used to be signed overflow (undefined behaviour) that wrapped to a small dim.
  const auto product = ValuesOf("Mul", {Dim{int64_t{1} << 62, ""}}, {Dim{4, ""}});
  ASSERT_TRUE(product.has_value());
  EXPECT_FALSE((*product)[0].known());
  EXPECT_TRUE((*product)[0].param.empty());
  const auto sum = ValuesOf("Add", {Dim{INT64_MAX, ""}}, {Dim{1, ""}});
  ASSERT_TRUE(sum.has_value());
  EXPECT_FALSE((*sum)[0].known());
  const auto ok = ValuesOf("Mul", {Dim{6, ""}}, {Dim{7, ""}});
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ((*ok)[0], (Dim{42, ""}));
}

TEST(FuzzFoundRules, ASymbolThatLooksLikeALiteralIsNoNumber) {
  // A model's own dim_param may start with '#': it used to throw std::invalid_argument.
  EXPECT_FALSE(ShapeValueNumber(Dim{-1, "#x"}).has_value());
  EXPECT_FALSE(ShapeValueNumber(Dim{-1, "#99999999999999999999999"}).has_value());
  EXPECT_FALSE(ShapeValueNumber(Dim{-1, "#-3x"}).has_value());
  EXPECT_EQ(ShapeValueNumber(Dim{-1, "#-3"}), std::optional<int64_t>(-3));
  EXPECT_EQ(ShapeValueNumber(ShapeValueLiteral(-7)), std::optional<int64_t>(-7));
}

// Output dims of one node whose inputs have the given dims (constants where given).
std::vector<Dim> OutputDims(ir::Node node, std::vector<std::vector<Dim>> dims, std::vector<const Tensor*> constants) {
  std::vector<std::shared_ptr<const TypeInfo>> types;
  for (size_t i = 0; i < dims.size(); ++i) {
    node.inputs.push_back("in" + std::to_string(i));
    types.push_back(TypeInfo::Tensor(i == 0 ? DataType::kFloat : DataType::kInt64, dims[i]));
  }
  node.outputs = {"y"};
  InferenceContext ctx(node, types, constants);
  (*FindInferenceRule("", node.op_type))(ctx);
  return ctx.outputs()[0] && ctx.outputs()[0]->shape ? *ctx.outputs()[0]->shape : std::vector<Dim>{};
}

TEST(FuzzFoundRules, DimProductsThatOverflowAreUnknown) {
  // Flatten, Tile and Reshape multiplied dims without checking (signed overflow).
  const int64_t huge = int64_t{1} << 62;
  ir::Node flatten;
  flatten.op_type = "Flatten";
  flatten.opset = 13;
  const auto flat = OutputDims(flatten, {{Dim{huge, ""}, Dim{8, ""}, Dim{3, ""}}}, {nullptr});
  ASSERT_EQ(flat.size(), 2u);
  EXPECT_EQ(flat[0], (Dim{huge, ""}));
  EXPECT_EQ(flat[1], (Dim{24, ""}));
  const auto flat0 = OutputDims(flatten, {{Dim{2, ""}, Dim{huge, ""}, Dim{4, ""}}}, {nullptr});
  ASSERT_EQ(flat0.size(), 2u);
  EXPECT_FALSE(flat0[1].known());

  ir::Node tile;
  tile.op_type = "Tile";
  tile.opset = 13;
  const Tensor repeats = Tensor::FromVector<int64_t>(DataType::kInt64, {2}, std::vector<int64_t>{8, 3});
  const auto tiled = OutputDims(tile, {{Dim{huge, ""}, Dim{5, ""}}, {Dim{2, ""}}}, {nullptr, &repeats});
  ASSERT_EQ(tiled.size(), 2u);
  EXPECT_FALSE(tiled[0].known());
  EXPECT_EQ(tiled[1], (Dim{15, ""}));
}

TEST(FuzzFoundRules, SliceOnAScalarReadsNoDim) {
  // Axis 0 of a rank-0 input passed NormalizeAxis (which allows it for scalars) and was read.
  ir::Node slice;
  slice.op_type = "Slice";
  slice.opset = 13;
  const Tensor starts = Tensor::FromVector<int64_t>(DataType::kInt64, {1}, std::vector<int64_t>{0});
  const Tensor ends = Tensor::FromVector<int64_t>(DataType::kInt64, {1}, std::vector<int64_t>{1});
  const Tensor axes = Tensor::FromVector<int64_t>(DataType::kInt64, {1}, std::vector<int64_t>{0});
  const auto out = OutputDims(slice, {{}, {Dim{1, ""}}, {Dim{1, ""}}, {Dim{1, ""}}}, {nullptr, &starts, &ends, &axes});
  EXPECT_TRUE(out.empty());
}

TEST(FuzzFoundRules, ConcatWhoseSizesOverflowIsUnknown) {
  ir::Node concat;
  concat.op_type = "Concat";
  concat.opset = 13;
  concat.attributes.push_back(ir::Attribute{"axis", ir::AttrType::kInt});
  const int64_t huge = INT64_MAX - 1;
  auto out = OutputDims(concat, {{Dim{huge, ""}, Dim{2, ""}}, {Dim{5, ""}, Dim{2, ""}}}, {nullptr, nullptr});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_FALSE(out[0].known());
  out = OutputDims(concat, {{Dim{3, ""}, Dim{2, ""}}, {Dim{5, ""}, Dim{2, ""}}}, {nullptr, nullptr});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], (Dim{8, ""}));
}

TEST(FuzzFoundRules, EvenSplitOfAHugeDimDoesNotOverflow) {
  // The ceiling (total + n - 1) / n overflowed for a dim near INT64_MAX.
  ir::Node split;
  split.op_type = "Split";
  split.opset = 13;
  split.inputs = {"x"};
  split.outputs = {"a", "b"};
  InferenceContext ctx(split, {TypeInfo::Tensor(DataType::kFloat, std::vector<Dim>{Dim{INT64_MAX, ""}})}, {nullptr});
  (*FindInferenceRule("", "Split"))(ctx);
  ASSERT_TRUE(ctx.outputs()[0] && ctx.outputs()[1]);
  EXPECT_EQ((*ctx.outputs()[0]->shape)[0], (Dim{int64_t{1} << 62, ""}));
  EXPECT_EQ((*ctx.outputs()[1]->shape)[0], (Dim{(int64_t{1} << 62) - 1, ""}));
}

}  // namespace
}  // namespace onyx
