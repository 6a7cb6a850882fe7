// BiasSoftmaxFusion: Add + Softmax to com.microsoft.BiasSoftmax, for the CUDA provider only.
#include "optimizer/fusion_test_util.h"

namespace onyx {
namespace {

using namespace test;

std::string AddSoftmax(const std::vector<int64_t>& scores, const std::vector<int64_t>& mask, bool mask_first,
                       int64_t opset = 17, int64_t axis = -1) {
  ModelBuilder b(opset);
  b.Input("scores", DataType::kFloat, scores).Input("mask", DataType::kFloat, mask);
  b.Output("y", DataType::kFloat, scores);
  b.Node("Add", mask_first ? std::vector<std::string>{"mask", "scores"} : std::vector<std::string>{"scores", "mask"},
         {"s"});
  b.Node("Softmax", {"s"}, {"y"}).attributes.push_back(IntAttr("axis", axis));
  return b.Bytes();
}

const std::vector<std::string> kCuda = {"CUDA", "CPU"};

TEST(BiasSoftmaxFusion, FusesInnerAndOuterBroadcastMasksForCuda) {
  struct Case {
    std::vector<int64_t> mask;
    int64_t inner;
  };
  // BERT's [B,1,1,S] mask on [B,N,S,S] scores is an inner broadcast; a [S,S] mask an outer one.
  for (const Case& c : {Case{{-1, 1, 1, 5}, 1}, Case{{5, 5}, 0}, Case{{1, 1, 5, 5}, 0}}) {
    for (bool mask_first : {false, true}) {
      const std::string bytes = AddSoftmax({-1, 2, 5, 5}, c.mask, mask_first);
      auto run = RunPasses(bytes, {"BiasSoftmaxFusion"}, OptLevel::kExtended, kCuda);
      auto n = FindNode(run.optimized_bytes, "BiasSoftmax", "com.microsoft");
      ASSERT_NE(n, nullptr);
      EXPECT_EQ(n->inputs, (std::vector<std::string>{"scores", "mask"}));
      EXPECT_EQ(Attr(*n, "axis")->i, 3);
      EXPECT_EQ(Attr(*n, "is_inner_broadcast")->i, c.inner);
      EXPECT_EQ(OpCount(run.ops_after, "Softmax"), 0);
    }
  }
}

TEST(BiasSoftmaxFusion, LeavesCpuModelsAndSoftmaxOverAnotherAxis) {
  // ONNX Runtime has no CPU kernel for BiasSoftmax: CPU-only sessions keep Add + Softmax.
  auto run = RunPasses(AddSoftmax({-1, 2, 5, 5}, {-1, 1, 1, 5}, false), {"BiasSoftmaxFusion"}, OptLevel::kExtended);
  EXPECT_EQ(OpCount(run.ops_after, "Softmax"), 1);
  // From opset 13 Softmax works on one axis: only the last one is fused.
  run = RunPasses(AddSoftmax({2, 2, 5, 5}, {2, 2, 5, 5}, false, 13, 2), {"BiasSoftmaxFusion"}, OptLevel::kExtended,
                  kCuda);
  EXPECT_EQ(OpCount(run.ops_after, "Softmax"), 1);
  // The mask differs in a softmax dim.
  run = RunPasses(AddSoftmax({2, 2, 5, 5}, {2, 2, 5, 1}, false), {"BiasSoftmaxFusion"}, OptLevel::kExtended, kCuda);
  EXPECT_EQ(OpCount(run.ops_after, "Softmax"), 1);
}

TEST(BiasSoftmaxFusion, FusesOpset11SoftmaxOverTrailingDims) {
  // Before opset 13, Softmax flattens the dims from `axis` on: the mask must match them.
  const std::string bytes = AddSoftmax({2, 2, 5, 5}, {2, 1, 5, 5}, false, 11, 2);
  auto run = RunPasses(bytes, {"BiasSoftmaxFusion"}, OptLevel::kExtended, kCuda);
  auto n = FindNode(run.optimized_bytes, "BiasSoftmax", "com.microsoft");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(Attr(*n, "axis")->i, 2);
  EXPECT_EQ(Attr(*n, "is_inner_broadcast")->i, 1);
}

}  // namespace
}  // namespace onyx
