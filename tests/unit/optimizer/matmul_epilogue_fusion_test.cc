// MatMulEpilogueFusion (com.onyx.FusedMatMul): the fused model must compute what the unfused
// MatMul + BiasGelu / FastGelu / Gelu / SkipLayerNormalization kernels compute, on every GEMM
// ISA the CPU has (the epilogue runs inside the selected microkernel).
#include "linalg/gemm.h"
#include "optimizer/fusion_test_util.h"

namespace onyx {
namespace {

using namespace test;

class IsaGuard {
 public:
  explicit IsaGuard(const std::string& isa) { linalg::ForceIsa(isa); }
  ~IsaGuard() { linalg::ForceIsa("auto"); }
};

// x [batch, seq, k] . W [k, n]; seq symbolic as exported transformers have it. 37 x 45 x 70
// leaves partial tiles on every ISA.
constexpr int64_t kSeq = 37, kK = 45, kN = 70;

ModelBuilder MatMulModel() {
  ModelBuilder b;
  b.model().opset_imports["com.microsoft"] = 1;
  b.Input("x", DataType::kFloat, {1, -1, kK});
  b.Initializer("W", RandomTensor({kK, kN}, 1)).Initializer("bias", RandomTensor({kN}, 2));
  b.Node("MatMul", {"x", "W"}, {"mm"});
  return b;
}

NamedValues Feeds() { return {{"x", RandomTensor({1, kSeq, kK}, 7, -2.0f, 2.0f)}}; }

// Runs the pass and checks the fused node, then the outputs on every ISA.
void ExpectFused(const ModelBuilder& b, const std::string& activation, size_t inputs, int layer_norms,
                 NamedValues feeds = Feeds()) {
  const std::string bytes = b.Bytes();
  auto run = RunFusion(bytes, "MatMulEpilogueFusion");
  EXPECT_EQ(OpCount(run.ops_after, "MatMul"), 0);
  EXPECT_EQ(OpCount(run.ops_after, "com.onyx.FusedMatMul"), 1);
  EXPECT_EQ(OpCount(run.ops_after, "LayerNormalization"), layer_norms);
  auto fused = FindNode(run.optimized_bytes, "FusedMatMul", "com.onyx");
  ASSERT_NE(fused, nullptr);
  const auto* act = Attr(*fused, "activation");
  EXPECT_EQ(act != nullptr ? act->s : "", activation);
  EXPECT_EQ(fused->inputs.size(), inputs);
  for (const std::string& isa : linalg::SupportedSgemmIsas()) {
    SCOPED_TRACE(isa);
    IsaGuard guard(isa);
    ExpectSameOutputs(bytes, run.optimized_bytes, feeds);
  }
}

TEST(MatMulEpilogueFusion, FoldsBiasGeluIntoTheGemm) {
  ModelBuilder b = MatMulModel();
  b.Node("BiasGelu", {"mm", "bias"}, {"y"}, "com.microsoft");
  b.Output("y", DataType::kFloat, {1, -1, kN});
  ExpectFused(b, "Gelu", 3, 0);
}

TEST(MatMulEpilogueFusion, FoldsFastGeluWithAndWithoutBias) {
  for (bool with_bias : {true, false}) {
    SCOPED_TRACE(with_bias);
    ModelBuilder b = MatMulModel();
    b.Node("FastGelu", with_bias ? std::vector<std::string>{"mm", "bias"} : std::vector<std::string>{"mm"}, {"y"},
           "com.microsoft");
    b.Output("y", DataType::kFloat, {1, -1, kN});
    ExpectFused(b, "FastGelu", with_bias ? 3 : 2, 0);
  }
}

TEST(MatMulEpilogueFusion, FoldsOnnxGeluByItsApproximation) {
  for (const std::string approximate : {"none", "tanh"}) {
    SCOPED_TRACE(approximate);
    ModelBuilder b(20);
    b.Input("x", DataType::kFloat, {1, -1, kK});
    b.Initializer("W", RandomTensor({kK, kN}, 1));
    b.Node("MatMul", {"x", "W"}, {"mm"});
    b.Node("Gelu", {"mm"}, {"y"}).attributes.push_back(StringAttr("approximate", approximate));
    b.Output("y", DataType::kFloat, {1, -1, kN});
    ExpectFused(b, approximate == "none" ? "Gelu" : "FastGelu", 2, 0);
  }
}

ModelBuilder SkipLayerNormModel(bool matmul_first, bool with_bias, bool with_beta, bool sum_output) {
  ModelBuilder b = MatMulModel();
  b.Input("skip", DataType::kFloat, {1, -1, kN});
  b.Initializer("gamma", RandomTensor({kN}, 3, 0.5f, 1.5f)).Initializer("beta", RandomTensor({kN}, 4));
  std::vector<std::string> inputs = {matmul_first ? "mm" : "skip", matmul_first ? "skip" : "mm", "gamma",
                                     with_beta ? "beta" : ""};
  if (with_bias) inputs.push_back("bias");
  std::vector<std::string> outputs = {"y"};
  if (sum_output) outputs = {"y", "", "", "sum"};
  b.Node("SkipLayerNormalization", inputs, outputs, "com.microsoft").attributes.push_back(FloatAttr("epsilon", 1e-5f));
  b.Output("y", DataType::kFloat, {1, -1, kN});
  if (sum_output) b.Output("sum", DataType::kFloat, {1, -1, kN});
  return b;
}

NamedValues SkipFeeds() {
  NamedValues feeds = Feeds();
  feeds.emplace_back("skip", RandomTensor({1, kSeq, kN}, 8, -2.0f, 2.0f));
  return feeds;
}

TEST(MatMulEpilogueFusion, SplitsSkipLayerNormIntoResidualEpilogueAndLayerNorm) {
  for (bool matmul_first : {true, false})
    for (bool with_bias : {true, false})
      for (bool with_beta : {true, false})
        for (bool sum_output : {false, true}) {
          SCOPED_TRACE(std::to_string(matmul_first) + std::to_string(with_bias) + std::to_string(with_beta) +
                       std::to_string(sum_output));
          ExpectFused(SkipLayerNormModel(matmul_first, with_bias, with_beta, sum_output), "", 4, 1, SkipFeeds());
        }
}

TEST(MatMulEpilogueFusion, LeavesWhatItCannotFold) {
  {  // the MatMul output is read twice
    ModelBuilder b = MatMulModel();
    b.Node("BiasGelu", {"mm", "bias"}, {"y"}, "com.microsoft");
    b.Output("y", DataType::kFloat, {1, -1, kN}).Output("mm", DataType::kFloat, {1, -1, kN});
    EXPECT_EQ(OpCount(RunFusion(b.Bytes(), "MatMulEpilogueFusion").ops_after, "com.onyx.FusedMatMul"), 0);
  }
  {  // the weight is not a constant
    ModelBuilder b;
    b.model().opset_imports["com.microsoft"] = 1;
    b.Input("x", DataType::kFloat, {1, -1, kK}).Input("W", DataType::kFloat, {kK, kN});
    b.Node("MatMul", {"x", "W"}, {"mm"});
    b.Node("FastGelu", {"mm"}, {"y"}, "com.microsoft");
    b.Output("y", DataType::kFloat, {1, -1, kN});
    EXPECT_EQ(OpCount(RunFusion(b.Bytes(), "MatMulEpilogueFusion").ops_after, "com.onyx.FusedMatMul"), 0);
  }
  {  // a skip that broadcasts over the batch
    ModelBuilder b = MatMulModel();
    b.Input("skip", DataType::kFloat, {-1, kN});
    b.Initializer("gamma", RandomTensor({kN}, 3));
    b.Node("SkipLayerNormalization", {"mm", "skip", "gamma"}, {"y"}, "com.microsoft");
    b.Output("y", DataType::kFloat, {1, -1, kN});
    EXPECT_EQ(OpCount(RunFusion(b.Bytes(), "MatMulEpilogueFusion").ops_after, "com.onyx.FusedMatMul"), 0);
  }
  {  // SkipLayerNormalization's mean is read
    ModelBuilder b = MatMulModel();
    b.Input("skip", DataType::kFloat, {1, -1, kN});
    b.Initializer("gamma", RandomTensor({kN}, 3));
    b.Node("SkipLayerNormalization", {"mm", "skip", "gamma"}, {"y", "mean"}, "com.microsoft");
    b.Output("y", DataType::kFloat, {1, -1, kN}).Output("mean", DataType::kFloat, {1, -1, 1});
    EXPECT_EQ(OpCount(RunFusion(b.Bytes(), "MatMulEpilogueFusion").ops_after, "com.onyx.FusedMatMul"), 0);
  }
  {  // below level "all" nothing changes
    ModelBuilder b = MatMulModel();
    b.Node("BiasGelu", {"mm", "bias"}, {"y"}, "com.microsoft");
    b.Output("y", DataType::kFloat, {1, -1, kN});
    EXPECT_EQ(OpCount(RunFusion(b.Bytes(), "MatMulEpilogueFusion", OptLevel::kExtended).ops_after,
                      "com.onyx.FusedMatMul"),
              0);
  }
}

}  // namespace
}  // namespace onyx
