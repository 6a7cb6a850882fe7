// MatMulConstantTransposeFusion: MatMul(A, Transpose(W)) with a constant W reads W itself (transB)
// instead of a folded copy of W^T, which would be new memory at every session creation.
#include "optimizer/fusion_test_util.h"

namespace onyx {
namespace {

using namespace test;

// gpt2_small's head in small: the embedding `w` [N, K] is gathered and also read transposed.
ModelBuilder TiedHead(std::vector<int64_t> perm) {
  ModelBuilder b;
  b.Input("ids", DataType::kInt64, {2, 3}).Input("h", DataType::kFloat, {2, 3, 8});
  b.Initializer("w", RandomTensor({5, 8}, 7));
  b.Node("Gather", {"w", "ids"}, {"emb"});
  ir::Node& t = b.Node("Transpose", {"w"}, {"wt"});
  if (!perm.empty()) t.attributes.push_back(IntsAttr("perm", perm));
  b.Node("MatMul", {"h", "wt"}, {"logits"});
  b.Output("emb", DataType::kFloat, {2, 3, 8}).Output("logits", DataType::kFloat, {2, 3, 5});
  return b;
}

std::shared_ptr<ir::Model> Optimized(const std::string& bytes, OptLevel level) {
  auto model = LoadModelFromBytes(bytes.data(), bytes.size());
  OptimizerOptions options;
  options.level = level;
  options.providers = {"CPU"};
  options.require_kernels = true;  // as a session does
  OptimizeModel(*model, options);
  return model;
}

TEST(MatMulConstantTransposeFusion, AllPassesReadTheConstantItselfTransposed) {
  for (const std::vector<int64_t>& perm : {std::vector<int64_t>{1, 0}, std::vector<int64_t>{}}) {
    const std::string bytes = TiedHead(perm).Bytes();
    auto model = Optimized(bytes, OptLevel::kAll);
    // Without the pass, constant folding left MatMul(h, <W^T folded>) and a second initializer.
    EXPECT_EQ(model->graph->initializers.size(), 1u);
    EXPECT_NE(model->graph->FindInitializer("w"), nullptr);
    const std::string optimized = SerializeModel(*model);
    auto fused = FindNode(optimized, "FusedMatMul", "com.microsoft");
    ASSERT_NE(fused, nullptr);
    EXPECT_EQ(fused->inputs, (std::vector<std::string>{"h", "w"}));
    EXPECT_EQ(Attr(*fused, "transB")->i, 1);
    EXPECT_EQ(Attr(*fused, "transA")->i, 0);
    EXPECT_FLOAT_EQ(Attr(*fused, "alpha")->f, 1.0f);
    ExpectSameOutputs(bytes, optimized,
                      {{"ids", Tensor::FromVector<int64_t>(DataType::kInt64, {2, 3}, {0, 4, 2, 1, 3, 4})}, {"h", RandomTensor({2, 3, 8}, 3)}});
  }
}

TEST(MatMulConstantTransposeFusion, LeavesOtherTransposesAndBasicLevel) {
  {  // basic: FusedMatMul is a contrib op; constant folding makes W^T as before
    auto model = Optimized(TiedHead({1, 0}).Bytes(), OptLevel::kBasic);
    EXPECT_EQ(model->graph->initializers.size(), 2u);
  }
  {  // a Transpose of a fed value is MatMulScaleFusion's, and a rank-3 constant is not a matrix
    ModelBuilder b;
    b.Input("h", DataType::kFloat, {2, 3, 8}).Input("x", DataType::kFloat, {5, 8});
    b.Initializer("w3", RandomTensor({2, 5, 8}, 4));
    b.Node("Transpose", {"x"}, {"xt"}).attributes.push_back(IntsAttr("perm", {1, 0}));
    b.Node("MatMul", {"h", "xt"}, {"y"});
    b.Node("Transpose", {"w3"}, {"w3t"}).attributes.push_back(IntsAttr("perm", {0, 2, 1}));
    b.Node("MatMul", {"h", "w3t"}, {"z"});
    b.Output("y", DataType::kFloat, {2, 3, 5}).Output("z", DataType::kFloat, {2, 3, 5});
    auto run = RunFusion(b.Bytes(), "MatMulConstantTransposeFusion");
    EXPECT_EQ(OpCount(run.ops_after, "MatMul"), 2);
    EXPECT_EQ(OpCount(run.ops_after, "Transpose"), 2);
  }
  {  // the transposed constant read by another node too: the folded copy is needed anyway
    ModelBuilder b = TiedHead({1, 0});
    b.Node("Relu", {"wt"}, {"r"});
    b.Output("r", DataType::kFloat, {8, 5});
    auto run = RunFusion(b.Bytes(), "MatMulConstantTransposeFusion");
    EXPECT_EQ(OpCount(run.ops_after, "MatMul"), 1);
  }
}

}  // namespace
}  // namespace onyx
