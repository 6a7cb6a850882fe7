// A weight made by constant folding (gpt2_small's head: a Transpose of its 154 MB embedding) is
// mostly packed by its MatMul and then dropped, so the folded tensor goes on small pages like the
// copies of misaligned initializers (docs/memory.md, "Weights"); its values are unchanged.
#include <gtest/gtest.h>

#include "optimizer/pass_test_util.h"
#include "runtime/page_flags.h"

namespace onyx {
namespace {

TEST(FoldedWeightPages, FoldedTransposeIsOnSmallPagesWithTheSameOutputs) {
  constexpr int64_t kN = 1024;  // 4 MB: a plain tensor this large is advised onto huge pages
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {2, kN}).Output("y", DataType::kFloat, {2, kN});
  b.Initializer("w", test::FloatTensor({kN, kN}, -0.5f, 1.0f / (kN * kN)));
  b.Node("Transpose", {"w"}, {"wt"});
  b.Node("MatMul", {"x", "wt"}, {"y"});
  const std::string bytes = b.Bytes();

  auto model = LoadModelFromBytes(bytes.data(), bytes.size());
  OptimizerOptions options;
  options.level = OptLevel::kAll;
  options.only_passes = {"ConstantFolding"};
  OptimizeModel(*model, options);
  const Tensor* folded = model->graph->FindInitializer("wt");
  ASSERT_NE(folded, nullptr) << "the Transpose of a constant was not folded";
  EXPECT_FALSE(test::HugePageAdvised(folded->raw_data())) << test::VmFlagsOf(folded->raw_data());
  if (test::ThpAvailable()) {
    const Tensor plain(DataType::kFloat, {kN, kN});
    EXPECT_TRUE(test::HugePageAdvised(plain.raw_data())) << "the contrast: " << test::VmFlagsOf(plain.raw_data());
  }
  test::ExpectSameOutputs(bytes, SerializeModel(*model), {{"x", test::FloatTensor({2, kN}, 1.0f, -0.001f)}});
}

}  // namespace
}  // namespace onyx
