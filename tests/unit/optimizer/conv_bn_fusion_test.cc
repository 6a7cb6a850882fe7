// ConvBatchNormFusion, ConvMulFusion and ConvAddFusion: per-channel constants folded into Conv.
#include "base/float_types.h"
#include "optimizer/fusion_test_util.h"

namespace onyx {
namespace {

using namespace test;

// x [1,3,6,6] -> Conv(W [4,3,3,3], B [4], pads 1) -> c
ModelBuilder ConvModel(bool with_bias = true) {
  ModelBuilder b;
  b.Input("x", DataType::kFloat, {1, 3, 6, 6});
  b.Initializer("W", RandomTensor({4, 3, 3, 3}, 1));
  std::vector<std::string> inputs = {"x", "W"};
  if (with_bias) {
    b.Initializer("B", RandomTensor({4}, 2));
    inputs.push_back("B");
  }
  b.Node("Conv", inputs, {"c"}).attributes.push_back(IntsAttr("pads", {1, 1, 1, 1}));
  return b;
}

void AddBatchNorm(ModelBuilder& b, const std::string& in, const std::string& out) {
  b.Initializer("scale", RandomTensor({4}, 3, 0.5f, 1.5f)).Initializer("bn_b", RandomTensor({4}, 4));
  b.Initializer("mean", RandomTensor({4}, 5)).Initializer("var", RandomTensor({4}, 6, 0.5f, 2.0f));
  b.Node("BatchNormalization", {in, "scale", "bn_b", "mean", "var"}, {out})
      .attributes.push_back(FloatAttr("epsilon", 1e-3f));
}

const NamedValues kFeeds = {{"x", RandomTensor({1, 3, 6, 6}, 7)}};

TEST(ConvBatchNormFusion, FoldsBatchNormIntoTheConv) {
  for (bool with_bias : {true, false}) {
    ModelBuilder b = ConvModel(with_bias);
    AddBatchNorm(b, "c", "y");
    b.Output("y", DataType::kFloat, {1, 4, 6, 6});
    const std::string bytes = b.Bytes();
    auto run = RunFusion(bytes, "ConvBatchNormFusion");
    EXPECT_EQ(OpCount(run.ops_after, "BatchNormalization"), 0);
    EXPECT_EQ(OpCount(run.ops_after, "Conv"), 1);
    auto conv = FindNode(run.optimized_bytes, "Conv");
    ASSERT_NE(conv, nullptr);
    EXPECT_EQ(conv->inputs.size(), 3u);
    EXPECT_EQ(conv->outputs[0], "y");
    ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes, kFeeds);
  }
}

// A float tensor's values as `dtype` (float16 or double).
Tensor As(DataType dtype, const Tensor& t) {
  Tensor out(dtype, t.shape());
  for (int64_t i = 0; i < t.size(); ++i) {
    if (dtype == DataType::kFloat16) out.data<uint16_t>()[i] = FloatToHalfBits(t.data<float>()[i]);
    else out.data<double>()[i] = t.data<float>()[i];
  }
  return out;
}

double ValueAt(const Tensor& t, int64_t i) {
  return t.dtype() == DataType::kFloat16 ? HalfBitsToFloat(t.data<uint16_t>()[i]) : t.data<double>()[i];
}

// Folded float16 and double weights are each weight times its channel's factor, rounded once to
// the weights' type: the expected values are computed here from the BatchNormalization formula.
TEST(ConvBatchNormFusion, FoldsIntoFloat16AndDoubleWeights) {
  for (DataType dtype : {DataType::kFloat16, DataType::kDouble}) {
    const Tensor w = As(dtype, RandomTensor({4, 3, 3, 3}, 1));
    const Tensor scale = As(dtype, RandomTensor({4}, 3, 0.5f, 1.5f)), var = As(dtype, RandomTensor({4}, 6, 0.5f, 2.0f));
    ModelBuilder b;
    b.Input("x", dtype, {1, 3, 6, 6});
    b.Initializer("W", w);
    b.Node("Conv", {"x", "W"}, {"c"}).attributes.push_back(IntsAttr("pads", {1, 1, 1, 1}));
    b.Initializer("scale", scale).Initializer("bn_b", As(dtype, RandomTensor({4}, 4)));
    b.Initializer("mean", As(dtype, RandomTensor({4}, 5))).Initializer("var", var);
    b.Node("BatchNormalization", {"c", "scale", "bn_b", "mean", "var"}, {"y"})
        .attributes.push_back(FloatAttr("epsilon", 1e-3f));
    b.Output("y", dtype, {1, 4, 6, 6});
    auto run = RunFusion(b.Bytes(), "ConvBatchNormFusion");
    ASSERT_EQ(OpCount(run.ops_after, "BatchNormalization"), 0) << DataTypeName(dtype);
    auto model = LoadModelFromBytes(run.optimized_bytes.data(), run.optimized_bytes.size());
    auto conv = FindNode(run.optimized_bytes, "Conv");
    ASSERT_NE(conv, nullptr);
    const Tensor* folded = model->graph->FindInitializer(conv->inputs[1]);
    ASSERT_NE(folded, nullptr);
    ASSERT_EQ(folded->dtype(), dtype);
    for (int64_t i = 0; i < w.size(); ++i) {
      const int64_t m = i / 27;
      const double factor = ValueAt(scale, m) / std::sqrt(ValueAt(var, m) + static_cast<double>(1e-3f));
      const double want = ValueAt(w, i) * factor;
      if (dtype == DataType::kFloat16)
        EXPECT_EQ(folded->data<uint16_t>()[i], FloatToHalfBits(static_cast<float>(want))) << i;
      else
        EXPECT_EQ(folded->data<double>()[i], want) << i;
    }
  }
}

TEST(ConvBatchNormFusion, KeepsBatchNormWhenTheConvOutputIsReadElsewhere) {
  ModelBuilder b = ConvModel();
  AddBatchNorm(b, "c", "y");
  b.Output("y", DataType::kFloat, {1, 4, 6, 6}).Output("c", DataType::kFloat, {1, 4, 6, 6});
  auto run = RunFusion(b.Bytes(), "ConvBatchNormFusion");
  EXPECT_EQ(OpCount(run.ops_after, "BatchNormalization"), 1);
}

TEST(ConvBatchNormFusion, KeepsBatchNormWithStatisticsFedAtRunTime) {
  ModelBuilder b = ConvModel();
  b.Input("scale", DataType::kFloat, {4});
  b.Initializer("bn_b", RandomTensor({4}, 4)).Initializer("mean", RandomTensor({4}, 5));
  b.Initializer("var", RandomTensor({4}, 6, 0.5f, 2.0f));
  b.Node("BatchNormalization", {"c", "scale", "bn_b", "mean", "var"}, {"y"});
  b.Output("y", DataType::kFloat, {1, 4, 6, 6});
  auto run = RunFusion(b.Bytes(), "ConvBatchNormFusion");
  EXPECT_EQ(OpCount(run.ops_after, "BatchNormalization"), 1);
}

TEST(ConvBatchNormFusion, KeepsTrainingModeBatchNorm) {
  ModelBuilder b = ConvModel();
  AddBatchNorm(b, "c", "y");
  b.model().graph->nodes.back()->attributes.push_back(IntAttr("training_mode", 1));
  b.Output("y", DataType::kFloat, {1, 4, 6, 6});
  auto run = RunFusion(b.Bytes(), "ConvBatchNormFusion");
  EXPECT_EQ(OpCount(run.ops_after, "BatchNormalization"), 1);
}

TEST(ConvMulFusion, FoldsPerChannelAndScalarFactorsInEitherOrder) {
  for (const Shape& shape : std::vector<Shape>{{4, 1, 1}, {1, 4, 1, 1}, {}, {1}}) {
    for (bool factor_first : {false, true}) {
      ModelBuilder b = ConvModel();
      b.Initializer("f", RandomTensor(shape, 8, 0.5f, 2.0f));
      b.Node("Mul", factor_first ? std::vector<std::string>{"f", "c"} : std::vector<std::string>{"c", "f"}, {"y"});
      b.Output("y", DataType::kFloat, {1, 4, 6, 6});
      const std::string bytes = b.Bytes();
      auto run = RunFusion(bytes, "ConvMulFusion");
      EXPECT_EQ(OpCount(run.ops_after, "Mul"), 0) << ShapeToString(shape);
      EXPECT_EQ(OpCount(run.ops_after, "Conv"), 1);
      ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes, kFeeds);
    }
  }
}

TEST(ConvMulFusion, KeepsFactorsThatAreNotPerChannel) {
  // Spatial factors, a factor that widens the output, and a factor fed at run time.
  for (const Shape& shape : std::vector<Shape>{{1, 1, 6, 6}, {2, 4, 1, 1}, {6, 1}}) {
    ModelBuilder b = ConvModel();
    b.Initializer("f", RandomTensor(shape, 8));
    b.Node("Mul", {"c", "f"}, {"y"});
    b.Output("y", DataType::kFloat,
             shape.size() == 4 && shape[0] == 2 ? std::vector<int64_t>{2, 4, 6, 6} : std::vector<int64_t>{1, 4, 6, 6});
    auto run = RunFusion(b.Bytes(), "ConvMulFusion");
    EXPECT_EQ(OpCount(run.ops_after, "Mul"), 1) << ShapeToString(shape);
  }
  ModelBuilder b = ConvModel();
  b.Input("f", DataType::kFloat, {4, 1, 1});
  b.Node("Mul", {"c", "f"}, {"y"});
  b.Output("y", DataType::kFloat, {1, 4, 6, 6});
  auto run = RunFusion(b.Bytes(), "ConvMulFusion");
  EXPECT_EQ(OpCount(run.ops_after, "Mul"), 1);
}

TEST(ConvAddFusion, FoldsPerChannelConstantsIntoTheBias) {
  for (bool with_bias : {true, false}) {
    ModelBuilder b = ConvModel(with_bias);
    b.Initializer("a", RandomTensor({1, 4, 1, 1}, 9));
    b.Node("Add", {"a", "c"}, {"y"});
    b.Output("y", DataType::kFloat, {1, 4, 6, 6});
    const std::string bytes = b.Bytes();
    auto run = RunFusion(bytes, "ConvAddFusion");
    EXPECT_EQ(OpCount(run.ops_after, "Add"), 0);
    auto conv = FindNode(run.optimized_bytes, "Conv");
    ASSERT_NE(conv, nullptr);
    EXPECT_EQ(conv->inputs[1], "W");  // the weights stay shared
    ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes, kFeeds);
  }
}

TEST(ConvAddFusion, KeepsResidualAddsAndSharedConvOutputs) {
  ModelBuilder b = ConvModel();
  b.Input("z", DataType::kFloat, {1, 4, 6, 6});
  b.Node("Add", {"c", "z"}, {"y"});
  b.Initializer("a", RandomTensor({4, 1, 1}, 9));
  b.Node("Add", {"c", "a"}, {"y2"});
  b.Output("y", DataType::kFloat, {1, 4, 6, 6}).Output("y2", DataType::kFloat, {1, 4, 6, 6});
  auto run = RunFusion(b.Bytes(), "ConvAddFusion");
  EXPECT_EQ(OpCount(run.ops_after, "Add"), 2);
}

}  // namespace
}  // namespace onyx
