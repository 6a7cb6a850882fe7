#include "ops/shape_inference.h"

#include <gtest/gtest.h>

#include "model_builder.h"
#include "infer_test_util.h"
#include "onnx/model_loader.h"

namespace onyx {
namespace {

using test::Infer;
using test::TypeOf;

// Types after a save/load round trip (the loader sets each node's opset).
TEST(ShapeInference, PropagatesThroughACnnHead) {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {-1, 3, 224, 224}).Output("y", DataType::kFloat, {-1, 10});
  b.Output("s", DataType::kInt64, {4}).Output("bools", DataType::kBool, {-1, 10});
  b.Initializer("w", test::FloatTensor({16, 3, 3, 3}));
  b.Initializer("fc", test::FloatTensor({16, 10}));
  auto& conv = b.Node("Conv", {"x", "w"}, {"c"});
  conv.attributes.push_back({"strides", ir::AttrType::kInts});
  conv.attributes.back().ints = {2, 2};
  conv.attributes.push_back({"pads", ir::AttrType::kInts});
  conv.attributes.back().ints = {1, 1, 1, 1};
  b.Node("Relu", {"c"}, {"r"});
  b.Node("GlobalAveragePool", {"r"}, {"g"});
  b.Node("Flatten", {"g"}, {"f"});
  b.Node("MatMul", {"f", "fc"}, {"y"});
  b.Node("Shape", {"r"}, {"s"});
  b.Node("Greater", {"y", "y"}, {"bools"});
  const auto types = Infer(b);
  EXPECT_EQ(TypeOf(types, "c"), "tensor(float)[d0,16,112,112]");
  EXPECT_EQ(TypeOf(types, "r"), "tensor(float)[d0,16,112,112]");
  EXPECT_EQ(TypeOf(types, "g"), "tensor(float)[d0,16,1,1]");
  EXPECT_EQ(TypeOf(types, "f"), "tensor(float)[?,16]");
  EXPECT_EQ(TypeOf(types, "y"), "tensor(float)[?,10]");
  EXPECT_EQ(TypeOf(types, "s"), "tensor(int64)[4]");
  EXPECT_EQ(TypeOf(types, "bools"), "tensor(bool)[?,10]");
}

TEST(ShapeInference, ReshapeTransposeSliceWithConstants) {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {-1, 128, 768}).Output("t", DataType::kFloat, {-1, 12, 128, 64}).Output("sl", DataType::kFloat, {-1, -1, 768});
  b.Initializer("shape", Tensor::FromVector<int64_t>(DataType::kInt64, {4}, {0, 0, 12, 64}));
  b.Initializer("starts", Tensor::FromVector<int64_t>(DataType::kInt64, {1}, {8}));
  b.Initializer("ends", Tensor::FromVector<int64_t>(DataType::kInt64, {1}, {-8}));
  b.Initializer("axes", Tensor::FromVector<int64_t>(DataType::kInt64, {1}, {1}));
  b.Node("Reshape", {"x", "shape"}, {"r"});
  auto& tr = b.Node("Transpose", {"r"}, {"t"});
  tr.attributes.push_back({"perm", ir::AttrType::kInts});
  tr.attributes.back().ints = {0, 2, 1, 3};
  b.Node("Slice", {"x", "starts", "ends", "axes"}, {"sl"});
  const auto types = Infer(b);
  EXPECT_EQ(TypeOf(types, "r"), "tensor(float)[d0,128,12,64]");
  EXPECT_EQ(TypeOf(types, "t"), "tensor(float)[d0,12,128,64]");
  EXPECT_EQ(TypeOf(types, "sl"), "tensor(float)[d0,112,768]");
}

TEST(ShapeInference, UnknownOpsLeaveValuesUntyped) {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {2}).Output("z", DataType::kFloat, {2});
  b.Node("NoRuleOp", {"x"}, {"y"});
  b.Node("Relu", {"y"}, {"z"});
  const auto types = Infer(b);
  EXPECT_EQ(TypeOf(types, "y"), "none");
  EXPECT_EQ(TypeOf(types, "z"), "tensor(float)[2]");  // declared as a graph output
}

}  // namespace
}  // namespace onyx

namespace onyx {
namespace {

TEST(ShapeInference, SplitWithRuntimeSizesIsUnknown) {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {2, 8}).Input("sizes", DataType::kInt64, {2});
  for (const char* out : {"p", "q", "r", "s", "t", "u"}) b.Output(out, DataType::kFloat, {-1, -1});
  b.Initializer("const_sizes", Tensor::FromVector<int64_t>(DataType::kInt64, {2}, {3, 5}));
  b.Node("Split", {"x", "sizes"}, {"p", "q"}).attributes.push_back({"axis", ir::AttrType::kInt, "", 0.0f, 1});
  b.Node("Split", {"x", "const_sizes"}, {"r", "s"}).attributes.push_back({"axis", ir::AttrType::kInt, "", 0.0f, 1});
  b.Node("Split", {"x"}, {"t", "u"}).attributes.push_back({"axis", ir::AttrType::kInt, "", 0.0f, 1});
  const auto types = Infer(b);
  EXPECT_EQ(TypeOf(types, "p"), "tensor(float)[2,?]");
  EXPECT_EQ(TypeOf(types, "q"), "tensor(float)[2,?]");
  EXPECT_EQ(TypeOf(types, "s"), "tensor(float)[2,5]");
  EXPECT_EQ(TypeOf(types, "u"), "tensor(float)[2,4]");
}

}  // namespace
}  // namespace onyx

namespace onyx {
namespace {

std::shared_ptr<const TypeInfo> FloatType(std::vector<Dim> dims) { return TypeInfo::Tensor(DataType::kFloat, std::move(dims)); }

// Declared value_info merged with what the rules infer, dim by dim.
TEST(ShapeInference, MergeDeclaredTypeKeepsWhatEachSideKnows) {
  const std::set<std::string> inputs = {"batch", "seq"};
  const Dim batch{-1, "batch"}, seq{-1, "seq"}, unk{-1, "unk__4"}, open{};
  auto merged = [&](std::vector<Dim> declared, std::vector<Dim> inferred) {
    return MergeDeclaredType(FloatType(std::move(declared)), FloatType(std::move(inferred)), inputs)->ToString();
  };
  // A converter's fresh symbol yields to an inferred symbol or number; nothing yields to anything.
  EXPECT_EQ(merged({unk, Dim{768, ""}}, {seq, Dim{768, ""}}), "tensor(float)[seq,768]");
  EXPECT_EQ(merged({unk, open}, {Dim{1, ""}, seq}), "tensor(float)[1,seq]");
  // A declared number wins over an inferred symbol or nothing.
  EXPECT_EQ(merged({Dim{4, ""}, Dim{2, ""}}, {batch, open}), "tensor(float)[4,2]");
  // A declared graph-input symbol stays; a declared symbol beats an unknown inferred dim.
  EXPECT_EQ(merged({seq, unk}, {batch, open}), "tensor(float)[seq,unk__4]");
  // Two different numbers, another rank or another dtype: the declaration, as before.
  EXPECT_EQ(merged({Dim{3, ""}}, {Dim{5, ""}}), "tensor(float)[3]");
  EXPECT_EQ(merged({unk}, {seq, seq}), "tensor(float)[unk__4]");
  EXPECT_EQ(MergeDeclaredType(TypeInfo::Tensor(DataType::kFloat16, std::vector<Dim>{unk}), FloatType({seq}), inputs)
                ->ToString(),
            "tensor(float16)[unk__4]");
  // No declared shape: the inferred one; nothing inferred: the declaration.
  EXPECT_EQ(MergeDeclaredType(TypeInfo::Tensor(DataType::kFloat, std::nullopt), FloatType({seq}), inputs)->ToString(),
            "tensor(float)[seq]");
  EXPECT_EQ(MergeDeclaredType(FloatType({unk}), nullptr, inputs)->ToString(), "tensor(float)[unk__4]");
}

// As the float16 converter writes them: value_info with fresh symbols (unk__N) where the rules
// derive the graph inputs' symbols. Downstream values see the merged dims.
TEST(ShapeInference, DeclaredFreshSymbolsYieldToInferredDims) {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {-1, 8}).Output("z", DataType::kFloat, {-1, -1});
  b.Initializer("w", test::FloatTensor({8, 8}));
  b.Node("Relu", {"x"}, {"y"});
  b.Node("MatMul", {"y", "w"}, {"m"});
  b.Node("Add", {"m", "x"}, {"z"});
  b.model().graph->value_types["y"] = FloatType({Dim{-1, "unk__1"}, Dim{-1, "unk__2"}});
  b.model().graph->value_types["m"] = FloatType({Dim{-1, "unk__1"}, Dim{}});
  const auto types = Infer(b);
  EXPECT_EQ(TypeOf(types, "y"), "tensor(float)[d0,8]");
  EXPECT_EQ(TypeOf(types, "m"), "tensor(float)[d0,8]");
  EXPECT_EQ(TypeOf(types, "z"), "tensor(float)[d0,8]");
}

TEST(ShapeInference, DeclaredNumbersStillWinOverInferredOnes) {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {-1, 8}).Output("y", DataType::kFloat, {-1, -1});
  b.Node("Relu", {"x"}, {"y0"});
  b.Node("Relu", {"y0"}, {"y"});
  b.model().graph->value_types["y0"] = FloatType({Dim{2, ""}, Dim{9, ""}});
  const auto types = Infer(b);
  EXPECT_EQ(TypeOf(types, "y0"), "tensor(float)[2,9]");
}

}  // namespace
}  // namespace onyx
