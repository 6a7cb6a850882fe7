// GeluFusion (erf form), FastGeluFusion (tanh form) and BiasGeluFusion.
#include <cmath>

#include "base/float_types.h"
#include "optimizer/fusion_test_util.h"

namespace onyx {
namespace {

using namespace test;

constexpr float kSqrt2 = 1.41421356f;
const NamedValues kFeeds = {{"x", RandomTensor({2, 3, 8}, 1, -3.0f, 3.0f)}};

ModelBuilder WithX(int64_t opset = 17) {
  ModelBuilder b(opset);
  b.Input("x", DataType::kFloat, {2, 3, 8}).Output("y", DataType::kFloat, {2, 3, 8});
  b.Initializer("one", Scalar(1.0f)).Initializer("half", Scalar(0.5f));
  return b;
}

// The erf GELU of x in one of the variants exporters write.
enum class ErfVariant { kBert, kHalfFirst, kHalfOfSum, kMulInvSqrt2Commuted };

std::string ErfGelu(ErfVariant v, int64_t opset = 17) {
  ModelBuilder b = WithX(opset);
  if (v == ErfVariant::kMulInvSqrt2Commuted) {
    b.Initializer("k", Scalar(1.0f / kSqrt2));
    b.Node("Mul", {"k", "x"}, {"d"});
  } else {
    b.Initializer("k", Scalar(kSqrt2));
    b.Node("Div", {"x", "k"}, {"d"});
  }
  b.Node("Erf", {"d"}, {"e"});
  if (v == ErfVariant::kMulInvSqrt2Commuted)
    b.Node("Add", {"one", "e"}, {"a"});
  else
    b.Node("Add", {"e", "one"}, {"a"});
  switch (v) {
    case ErfVariant::kBert:  // (x * (1 + erf)) * 0.5
      b.Node("Mul", {"x", "a"}, {"m"});
      b.Node("Mul", {"m", "half"}, {"y"});
      break;
    case ErfVariant::kHalfFirst:  // (0.5 * x) * (1 + erf)
      b.Node("Mul", {"half", "x"}, {"h"});
      b.Node("Mul", {"h", "a"}, {"y"});
      break;
    case ErfVariant::kHalfOfSum:  // x * ((1 + erf) * 0.5)
      b.Node("Mul", {"a", "half"}, {"h"});
      b.Node("Mul", {"x", "h"}, {"y"});
      break;
    case ErfVariant::kMulInvSqrt2Commuted:  // (a * x) * 0.5 with everything commuted
      b.Node("Mul", {"a", "x"}, {"m"});
      b.Node("Mul", {"half", "m"}, {"y"});
      break;
  }
  return b.Bytes();
}

TEST(GeluFusion, FusesTheErfFormInItsVariants) {
  for (ErfVariant v :
       {ErfVariant::kBert, ErfVariant::kHalfFirst, ErfVariant::kHalfOfSum, ErfVariant::kMulInvSqrt2Commuted}) {
    const std::string bytes = ErfGelu(v);
    auto run = RunFusion(bytes, "GeluFusion");
    EXPECT_EQ(OpCount(run.ops_after, "com.microsoft.Gelu"), 1) << static_cast<int>(v);
    EXPECT_EQ(run.ops_after.size(), 1u) << static_cast<int>(v);
    auto gelu = FindNode(run.optimized_bytes, "Gelu", "com.microsoft");
    ASSERT_NE(gelu, nullptr);
    EXPECT_EQ(gelu->inputs, std::vector<std::string>{"x"});
    EXPECT_EQ(gelu->outputs, std::vector<std::string>{"y"});
    ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes, kFeeds);
  }
}

TEST(GeluFusion, FusesSqrt2RoundedToFloat16) {
  // A float16 model's sqrt(2) (1.4140625, 1.1e-4 off) widened to float by HalfBodyToFloat.
  ModelBuilder b = WithX();
  b.Initializer("k", Scalar(1.4140625f));
  b.Node("Div", {"x", "k"}, {"d"});
  b.Node("Erf", {"d"}, {"e"});
  b.Node("Add", {"e", "one"}, {"a"});
  b.Node("Mul", {"x", "a"}, {"m"});
  b.Node("Mul", {"m", "half"}, {"y"});
  auto run = RunFusion(b.Bytes(), "GeluFusion");
  EXPECT_EQ(OpCount(run.ops_after, "com.microsoft.Gelu"), 1);
  EXPECT_EQ(OpCount(run.ops_after, "Erf"), 0);
}

TEST(GeluFusion, WritesOnnxGeluFromOpset20) {
  const std::string bytes = ErfGelu(ErfVariant::kBert, 20);
  auto run = RunFusion(bytes, "GeluFusion");
  auto gelu = FindNode(run.optimized_bytes, "Gelu");
  ASSERT_NE(gelu, nullptr);
  EXPECT_EQ(Attr(*gelu, "approximate")->s, "none");
  EXPECT_EQ(OpsetImport(run.optimized_bytes, "com.microsoft"), 0);
  ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes, kFeeds);
}

TEST(GeluFusion, LeavesLookalikes) {
  {  // sqrt(3) is not sqrt(2)
    ModelBuilder b = WithX();
    b.Initializer("k", Scalar(1.7320508f));
    b.Node("Div", {"x", "k"}, {"d"});
    b.Node("Erf", {"d"}, {"e"});
    b.Node("Add", {"e", "one"}, {"a"});
    b.Node("Mul", {"x", "a"}, {"m"});
    b.Node("Mul", {"m", "half"}, {"y"});
    auto run = RunFusion(b.Bytes(), "GeluFusion");
    EXPECT_EQ(OpCount(run.ops_after, "Erf"), 1);
  }
  {  // the erf result is read elsewhere (a graph output)
    ModelBuilder b = WithX();
    b.Initializer("k", Scalar(kSqrt2));
    b.Node("Div", {"x", "k"}, {"d"});
    b.Node("Erf", {"d"}, {"e"});
    b.Node("Add", {"e", "one"}, {"a"});
    b.Node("Mul", {"x", "a"}, {"m"});
    b.Node("Mul", {"m", "half"}, {"y"});
    b.Output("e", DataType::kFloat, {2, 3, 8});
    auto run = RunFusion(b.Bytes(), "GeluFusion");
    EXPECT_EQ(OpCount(run.ops_after, "Erf"), 1);
  }
  {  // multiplied by another value than the erf's input
    ModelBuilder b = WithX();
    b.Input("z", DataType::kFloat, {2, 3, 8});
    b.Initializer("k", Scalar(kSqrt2));
    b.Node("Div", {"x", "k"}, {"d"});
    b.Node("Erf", {"d"}, {"e"});
    b.Node("Add", {"e", "one"}, {"a"});
    b.Node("Mul", {"z", "a"}, {"m"});
    b.Node("Mul", {"m", "half"}, {"y"});
    auto run = RunFusion(b.Bytes(), "GeluFusion");
    EXPECT_EQ(OpCount(run.ops_after, "Erf"), 1);
  }
  {  // a scale fed at run time
    ModelBuilder b = WithX();
    b.Input("k", DataType::kFloat, {});
    b.Node("Div", {"x", "k"}, {"d"});
    b.Node("Erf", {"d"}, {"e"});
    b.Node("Add", {"e", "one"}, {"a"});
    b.Node("Mul", {"x", "a"}, {"m"});
    b.Node("Mul", {"m", "half"}, {"y"});
    auto run = RunFusion(b.Bytes(), "GeluFusion");
    EXPECT_EQ(OpCount(run.ops_after, "Erf"), 1);
  }
}

// The tanh GELU in the GPT-2 form (Pow), with x*x*x, or Megatron's factored form.
enum class TanhVariant { kGpt2, kCube, kMegatron };

std::string TanhGelu(TanhVariant v, float cube_coef = 0.044715f) {
  ModelBuilder b = WithX();
  b.Initializer("k", Scalar(cube_coef)).Initializer("s", Scalar(0.7978845608f)).Initializer("three", Scalar(3.0f));
  switch (v) {
    case TanhVariant::kGpt2:
      b.Node("Mul", {"x", "half"}, {"h"});
      b.Node("Pow", {"x", "three"}, {"p"});
      b.Node("Mul", {"p", "k"}, {"pk"});
      b.Node("Add", {"x", "pk"}, {"inner"});
      b.Node("Mul", {"inner", "s"}, {"t0"});
      break;
    case TanhVariant::kCube:
      b.Node("Mul", {"x", "x"}, {"x2"});
      b.Node("Mul", {"x2", "x"}, {"x3"});
      b.Node("Mul", {"k", "x3"}, {"pk"});
      b.Node("Add", {"pk", "x"}, {"inner"});
      b.Node("Mul", {"s", "inner"}, {"t0"});
      b.Node("Mul", {"x", "half"}, {"h"});
      break;
    case TanhVariant::kMegatron:  // s*x * (1 + k*x*x)
      b.Node("Mul", {"x", "s"}, {"sx"});
      b.Node("Mul", {"x", "x"}, {"x2"});
      b.Node("Mul", {"x2", "k"}, {"kx2"});
      b.Node("Add", {"one", "kx2"}, {"p1"});
      b.Node("Mul", {"sx", "p1"}, {"t0"});
      b.Node("Mul", {"half", "x"}, {"h"});
      break;
  }
  b.Node("Tanh", {"t0"}, {"t"});
  b.Node("Add", {"t", "one"}, {"t1"});
  b.Node("Mul", {"h", "t1"}, {"y"});
  return b.Bytes();
}

TEST(FastGeluFusion, FusesTheTanhFormInItsVariants) {
  for (TanhVariant v : {TanhVariant::kGpt2, TanhVariant::kCube, TanhVariant::kMegatron}) {
    const std::string bytes = TanhGelu(v);
    auto run = RunFusion(bytes, "FastGeluFusion");
    EXPECT_EQ(OpCount(run.ops_after, "com.microsoft.FastGelu"), 1) << static_cast<int>(v);
    EXPECT_EQ(run.ops_after.size(), 1u) << static_cast<int>(v);
    ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes, kFeeds);
  }
}

// A float16 or bfloat16 model's constants, rounded (and widened to float by HalfBodyToFloat):
// float16 0.044715 is 1.5e-4 off.
TEST(FastGeluFusion, FusesCoefficientsRoundedToAHalfType) {
  const float half_coef = HalfBitsToFloat(FloatToHalfBits(0.044715f));
  const float bf16_coef = BFloat16BitsToFloat(FloatToBFloat16Bits(0.044715f));
  ASSERT_GT(std::fabs(half_coef - 0.044715) / 0.044715, 1e-4);
  for (float coef : {half_coef, bf16_coef}) {
    const std::string bytes = TanhGelu(TanhVariant::kGpt2, coef);
    auto run = RunFusion(bytes, "FastGeluFusion");
    EXPECT_EQ(OpCount(run.ops_after, "com.microsoft.FastGelu"), 1) << coef;
  }
  // One float16 step away is another coefficient.
  const float next = HalfBitsToFloat(static_cast<uint16_t>(FloatToHalfBits(0.044715f) + 1));
  auto run = RunFusion(TanhGelu(TanhVariant::kGpt2, next), "FastGeluFusion");
  EXPECT_EQ(OpCount(run.ops_after, "Tanh"), 1);
}

TEST(FastGeluFusion, LeavesOtherCoefficientsAndSharedIntermediates) {
  auto run = RunFusion(TanhGelu(TanhVariant::kGpt2, 0.05f), "FastGeluFusion");
  EXPECT_EQ(OpCount(run.ops_after, "Tanh"), 1);
  // x^3 also read elsewhere
  ModelBuilder b = WithX();
  b.Initializer("k", Scalar(0.044715f)).Initializer("s", Scalar(0.7978845608f)).Initializer("three", Scalar(3.0f));
  b.Node("Mul", {"x", "half"}, {"h"});
  b.Node("Pow", {"x", "three"}, {"p"});
  b.Node("Mul", {"p", "k"}, {"pk"});
  b.Node("Add", {"x", "pk"}, {"inner"});
  b.Node("Mul", {"inner", "s"}, {"t0"});
  b.Node("Tanh", {"t0"}, {"t"});
  b.Node("Add", {"t", "one"}, {"t1"});
  b.Node("Mul", {"h", "t1"}, {"y"});
  b.Output("p", DataType::kFloat, {2, 3, 8});
  run = RunFusion(b.Bytes(), "FastGeluFusion");
  EXPECT_EQ(OpCount(run.ops_after, "Tanh"), 1);
}

// MatMul + Add(bias) + GELU, as BERT's and GPT-2's feed-forward layers are exported.
std::string BiasedGelu(bool fast, bool bias_first) {
  ModelBuilder b;
  b.Input("a", DataType::kFloat, {-1, 3, 8}).Output("y", DataType::kFloat, {-1, 3, 8});
  b.model().opset_imports["com.microsoft"] = 1;
  b.Initializer("w", RandomTensor({8, 8}, 1)).Initializer("bias", RandomTensor({8}, 2));
  b.Node("MatMul", {"a", "w"}, {"mm"});
  b.Node("Add", bias_first ? std::vector<std::string>{"bias", "mm"} : std::vector<std::string>{"mm", "bias"}, {"x"});
  b.Node(fast ? "FastGelu" : "Gelu", {"x"}, {"y"}, "com.microsoft");
  return b.Bytes();
}

TEST(BiasGeluFusion, TakesTheBiasAddIntoBiasGeluOrFastGelu) {
  for (bool fast : {false, true}) {
    for (bool bias_first : {false, true}) {
      const std::string bytes = BiasedGelu(fast, bias_first);
      auto run = RunFusion(bytes, "BiasGeluFusion");
      EXPECT_EQ(OpCount(run.ops_after, "Add"), 0);
      auto fused = FindNode(run.optimized_bytes, fast ? "FastGelu" : "BiasGelu", "com.microsoft");
      ASSERT_NE(fused, nullptr);
      EXPECT_EQ(fused->inputs, (std::vector<std::string>{"mm", "bias"}));
      ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes, {{"a", RandomTensor({2, 3, 8}, 3)}});
    }
  }
}

TEST(BiasGeluFusion, LeavesBiasesThatAreNotPerFeatureAndSharedSums) {
  {  // a [3, 8] addend is no bias vector
    ModelBuilder b;
    b.Input("a", DataType::kFloat, {2, 3, 8}).Output("y", DataType::kFloat, {2, 3, 8});
    b.Initializer("bias", RandomTensor({3, 8}, 2));
    b.Node("Add", {"a", "bias"}, {"x"});
    b.Node("Gelu", {"x"}, {"y"}, "com.microsoft");
    auto run = RunFusion(b.Bytes(), "BiasGeluFusion");
    EXPECT_EQ(OpCount(run.ops_after, "Add"), 1);
  }
  {  // the sum is read elsewhere
    ModelBuilder b;
    b.Input("a", DataType::kFloat, {2, 3, 8}).Output("y", DataType::kFloat, {2, 3, 8});
    b.Output("x", DataType::kFloat, {2, 3, 8});
    b.Initializer("bias", RandomTensor({8}, 2));
    b.Node("Add", {"a", "bias"}, {"x"});
    b.Node("Gelu", {"x"}, {"y"}, "com.microsoft");
    auto run = RunFusion(b.Bytes(), "BiasGeluFusion");
    EXPECT_EQ(OpCount(run.ops_after, "Add"), 1);
  }
}

TEST(BiasGeluFusion, FusesAnExportedFeedForwardWithGeluFusion) {
  // MatMul + Add(bias, mm) + erf GELU, symbolic batch: MatMul + BiasGelu as ONNX Runtime makes.
  ModelBuilder b;
  b.Input("a", DataType::kFloat, {-1, 3, 8}).Output("y", DataType::kFloat, {-1, 3, 8});
  b.Initializer("w", RandomTensor({8, 8}, 1)).Initializer("bias", RandomTensor({8}, 2));
  b.Initializer("k", Scalar(kSqrt2)).Initializer("one", Scalar(1.0f)).Initializer("half", Scalar(0.5f));
  b.Node("MatMul", {"a", "w"}, {"mm"});
  b.Node("Add", {"bias", "mm"}, {"x"});
  b.Node("Div", {"x", "k"}, {"d"});
  b.Node("Erf", {"d"}, {"e"});
  b.Node("Add", {"e", "one"}, {"p"});
  b.Node("Mul", {"x", "p"}, {"m"});
  b.Node("Mul", {"m", "half"}, {"y"});
  const std::string bytes = b.Bytes();
  auto run = RunPasses(bytes, {"GeluFusion", "BiasGeluFusion", "MatMulAddFusion"}, OptLevel::kExtended);
  EXPECT_EQ(run.ops_after, (std::map<std::string, int>{{"MatMul", 1}, {"com.microsoft.BiasGelu", 1}}));
  ExpectSameOutputsWhenRunnable(bytes, run.optimized_bytes, {{"a", RandomTensor({2, 3, 8}, 3, -2.0f, 2.0f)}});
}

}  // namespace
}  // namespace onyx
