// ConvBatchNormFusion writes the folded weights over the loader's own copy of them (weights
// misaligned in the model file, copied onto small pages) when nothing else can see that copy,
// instead of into a fresh buffer as large as the weights; never over weights someone else holds.
// A fresh buffer, where one is needed, is on small pages too.
#include <cstring>

#include "base/aligned_memory.h"
#include "optimizer/fusion_test_util.h"
#include "tensor/small_page_allocator.h"

namespace onyx {
namespace {

using namespace test;

// Weights of 2.4 MB: the loader's copy of them is a small-page mapping of its own.
constexpr int64_t kChannels = 256;
const Shape kWeightShape = {kChannels, kChannels, 3, 3};
constexpr float kEpsilon = 1e-3f;

// x -> Conv(W) -> BatchNormalization -> y, for each BN suffix given; all Convs read "W".
std::shared_ptr<ir::Model> ConvBatchNormModel(const std::vector<std::string>& suffixes) {
  ModelBuilder b;
  b.Input("x", DataType::kFloat, {1, kChannels, 4, 4});
  b.Initializer("W", RandomTensor(kWeightShape, 1));
  for (size_t k = 0; k < suffixes.size(); ++k) {
    const std::string& s = suffixes[k];
    const uint32_t seed = static_cast<uint32_t>(10 * k);
    b.Node("Conv", {"x", "W"}, {"c" + s}).attributes.push_back(IntsAttr("pads", {1, 1, 1, 1}));
    b.Initializer("scale" + s, RandomTensor({kChannels}, seed + 3, 0.5f, 1.5f));
    b.Initializer("bias" + s, RandomTensor({kChannels}, seed + 4));
    b.Initializer("mean" + s, RandomTensor({kChannels}, seed + 5));
    b.Initializer("var" + s, RandomTensor({kChannels}, seed + 6, 0.5f, 2.0f));
    b.Node("BatchNormalization", {"c" + s, "scale" + s, "bias" + s, "mean" + s, "var" + s}, {"y" + s})
        .attributes.push_back(FloatAttr("epsilon", kEpsilon));
    b.Output("y" + s, DataType::kFloat, {1, kChannels, 4, 4});
  }
  const std::string bytes = b.Bytes();
  auto model = LoadModelFromBytes(bytes.data(), bytes.size());
  // As the loader holds weights misaligned in the file: a copy on small pages of Onyx's own.
  const Tensor original = RandomTensor(kWeightShape, 1);
  Tensor copy(DataType::kFloat, kWeightShape, CpuSmallPageAllocator());
  std::memcpy(copy.raw_data(), original.raw_data(), static_cast<size_t>(original.byte_size()));
  model->graph->initializers["W"] = std::move(copy);
  return model;
}

void FoldBatchNorms(ir::Model& model) {
  OptimizerOptions options;
  options.level = OptLevel::kAll;
  options.only_passes = {"ConvBatchNormFusion"};
  options.providers = {"CPU"};
  OptimizeModel(model, options);
}

// The weights Conv `suffix` reads after the fold, checked against W * scale / sqrt(var + eps)
// computed here in double and rounded once to float.
const Tensor& ExpectFolded(const ir::Model& model, const std::string& suffix, uint32_t seed) {
  const ir::Node* conv = nullptr;
  for (const auto& node : model.graph->nodes)
    if (node->op_type == "Conv" && node->outputs[0] == "y" + suffix) conv = node.get();
  EXPECT_NE(conv, nullptr) << "the BatchNormalization of y" << suffix << " is not folded";
  static const Tensor kMissing;
  if (conv == nullptr) return kMissing;
  const Tensor* folded = model.graph->FindInitializer(conv->inputs[1]);
  EXPECT_NE(folded, nullptr);
  if (folded == nullptr) return kMissing;
  const Tensor w = RandomTensor(kWeightShape, 1);
  const Tensor scale = RandomTensor({kChannels}, seed + 3, 0.5f, 1.5f);
  const Tensor var = RandomTensor({kChannels}, seed + 6, 0.5f, 2.0f);
  const int64_t per_channel = w.size() / kChannels;
  int64_t wrong = 0;
  for (int64_t i = 0; i < w.size(); ++i) {
    const int64_t m = i / per_channel;
    const double factor = static_cast<double>(scale.data<float>()[m]) /
                          std::sqrt(static_cast<double>(var.data<float>()[m]) + static_cast<double>(kEpsilon));
    wrong += folded->data<float>()[i] != static_cast<float>(static_cast<double>(w.data<float>()[i]) * factor);
  }
  EXPECT_EQ(wrong, 0) << "of " << w.size() << " folded weights of Conv y" << suffix;
  return *folded;
}

TEST(ConvBatchNormFoldInPlace, WritesOverTheLoadersCopyOfTheWeights) {
  auto model = ConvBatchNormModel({""});
  const void* copy = model->graph->FindInitializer("W")->raw_data();
  ASSERT_TRUE(IsOwnSmallPageMapping(copy));
  FoldBatchNorms(*model);
  EXPECT_EQ(ExpectFolded(*model, "", 0).raw_data(), copy) << "the fold took a fresh buffer";
  EXPECT_EQ(model->graph->FindInitializer("W"), nullptr);
}

TEST(ConvBatchNormFoldInPlace, LeavesWeightsOthersHoldAsTheyAre) {
  auto model = ConvBatchNormModel({""});
  const Tensor held = *model->graph->FindInitializer("W");  // as a caller keeping the tensor
  FoldBatchNorms(*model);
  EXPECT_NE(ExpectFolded(*model, "", 0).raw_data(), held.raw_data());
  const Tensor w = RandomTensor(kWeightShape, 1);
  EXPECT_EQ(std::memcmp(held.raw_data(), w.raw_data(), static_cast<size_t>(w.byte_size())), 0);
}

TEST(ConvBatchNormFoldInPlace, FoldsWeightsTwoConvsShareIntoEachOwnCopy) {
  // The first fold must not write over W while the second Conv still reads it.
  auto model = ConvBatchNormModel({"_a", "_b"});
  FoldBatchNorms(*model);
  const Tensor& a = ExpectFolded(*model, "_a", 0);
  const Tensor& b = ExpectFolded(*model, "_b", 10);
  EXPECT_NE(a.raw_data(), b.raw_data());
}

TEST(ConvBatchNormFoldInPlace, LeavesBuffersNotItsOwnAlone) {
  // A weight viewing a caller's buffer (no copy of Onyx's) is never written.
  auto model = ConvBatchNormModel({""});
  auto buffer = std::make_shared<std::vector<float>>(static_cast<size_t>(ShapeSize(kWeightShape)));
  const Tensor w = RandomTensor(kWeightShape, 1);
  std::memcpy(buffer->data(), w.raw_data(), static_cast<size_t>(w.byte_size()));
  model->graph->initializers["W"] = Tensor::View(DataType::kFloat, kWeightShape, buffer->data(), buffer);
  const float* data = buffer->data();
  buffer.reset();  // the graph's view holds the only reference
  FoldBatchNorms(*model);
  EXPECT_NE(ExpectFolded(*model, "", 0).raw_data(), data);
}

TEST(ConvBatchNormFoldInPlace, FoldsViewedWeightsOntoSmallPagesOfItsOwn) {
  // Weights viewed in place (aligned in the file) fold into a new buffer: a small-page mapping,
  // as the loader's copies are, since kernels pack it and the session drops it.
  auto model = ConvBatchNormModel({""});
  auto file = std::make_shared<std::vector<float>>(static_cast<size_t>(ShapeSize(kWeightShape)));
  const Tensor w = RandomTensor(kWeightShape, 1);
  std::memcpy(file->data(), w.raw_data(), static_cast<size_t>(w.byte_size()));
  model->graph->initializers["W"] = Tensor::View(DataType::kFloat, kWeightShape, file->data(), file);
  FoldBatchNorms(*model);
  EXPECT_TRUE(IsOwnSmallPageMapping(ExpectFolded(*model, "", 0).raw_data()));
  EXPECT_EQ(std::memcmp(file->data(), w.raw_data(), static_cast<size_t>(w.byte_size())), 0);
}

}  // namespace
}  // namespace onyx
