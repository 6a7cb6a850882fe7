// A float16 model's MatMul / Gemm weights are packed straight from their float16 bits: the
// session's creation makes no float copy of them (DeferWidening), its outputs are bit for bit
// those of the float32 model holding the widened weights (what the float copy computed), and
// every other reader of the weight's float values (constant folding, a saved optimized model,
// a creation cache) still gets them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>

#include <unistd.h>

#include "base/float_types.h"
#include "optimizer/pass_test_util.h"
#include "providers/cpu/kernels/linalg/deferred_half_widening.h"

namespace onyx {
namespace {

constexpr int64_t kM = 3, kK = 256, kN = 96;  // 24576 weights: above the deferral's 64 KB floor

Tensor HalfWeight() {
  Tensor w(DataType::kFloat16, {kK, kN});
  auto* bits = static_cast<uint16_t*>(w.raw_data());
  for (int64_t i = 0; i < w.size(); ++i) bits[i] = FloatToHalfBits(static_cast<float>(i % 193 - 96) / 1024.0f);
  bits[0] = 0x0001;  // the least subnormal
  bits[1] = 0xFBFF;  // -65504
  return w;
}

// x -> Cast(float16) -> MatMul(w) or Gemm(w) -> Cast(float) -> y.
std::string HalfModel(bool gemm) {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {kM, kK}).Output("y", DataType::kFloat, {kM, kN});
  b.Initializer("w", HalfWeight());
  b.Node("Cast", {"x"}, {"xh"}).attributes.push_back(test::IntAttr("to", static_cast<int64_t>(DataType::kFloat16)));
  b.Node(gemm ? "Gemm" : "MatMul", {"xh", "w"}, {"yh"});
  b.Node("Cast", {"yh"}, {"y"}).attributes.push_back(test::IntAttr("to", static_cast<int64_t>(DataType::kFloat)));
  return b.Bytes();
}

// The same product in float32 with the widened weight: the float copy's path.
Tensor Reference(const Tensor& x) {
  const Tensor w16 = HalfWeight();
  Tensor w(DataType::kFloat, {kK, kN});
  const auto* bits = static_cast<const uint16_t*>(w16.raw_data());
  for (int64_t i = 0; i < w.size(); ++i) w.data<float>()[i] = HalfBitsToFloat(bits[i]);
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {kM, kK}).Output("y", DataType::kFloat, {kM, kN});
  b.Initializer("w", w);
  b.Node("MatMul", {"x", "w"}, {"y"});
  const std::string bytes = b.Bytes();
  Session s(bytes.data(), bytes.size(), SessionOptions{});
  return s.Run({{"x", x}})[0].tensor();
}

void ExpectBitEqual(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.shape(), want.shape());
  EXPECT_EQ(std::memcmp(got.raw_data(), want.raw_data(), static_cast<size_t>(want.byte_size())), 0);
}

TEST(HalfWidenDeferred, TheSessionPacksTheWeightWithoutWritingAFloatCopy) {
  for (bool gemm : {false, true}) {
    const std::string bytes = HalfModel(gemm);
    // The pass leaves the weight's float values unwritten when asked to.
    auto model = LoadModelFromBytes(bytes.data(), bytes.size());
    OptimizerOptions options;
    options.level = OptLevel::kBasic;
    options.only_passes = {"HalfBodyToFloat"};
    options.defer_half_widening = true;
    OptimizeModel(*model, options);
    const Tensor* wide = model->graph->FindInitializer("w_float");
    ASSERT_NE(wide, nullptr);
    // (Where the platform cannot defer, the pass widens at once: only the results are checked.)
    EXPECT_EQ(IsDeferredWidening(*wide), CanDeferWidening()) << (gemm ? "Gemm" : "MatMul");
    // A session packs it from the float16 bits: no float copy written, the float32 result.
    const int64_t written = HalfWeightFloatCopyBytes();
    Session session(bytes.data(), bytes.size(), SessionOptions{});
    if (CanDeferWidening()) EXPECT_EQ(HalfWeightFloatCopyBytes(), written) << (gemm ? "Gemm" : "MatMul");
    const Tensor x = test::FloatTensor({kM, kK}, -0.5f, 1.0f / 512.0f);
    ExpectBitEqual(session.Run({{"x", x}})[0].tensor(), Reference(x));
  }
}

// An embedding table Gather reads (and, as in GPT-2, a tied head reads transposed): Gather widens
// the rows it picks, the head packs from the float16 bits, and no float copy is made.
TEST(HalfWidenDeferred, GatherWidensOnlyTheRowsItReads) {
  constexpr int64_t kRows = 512, kCols = 64;
  Tensor table(DataType::kFloat16, {kRows, kCols});
  auto* bits = static_cast<uint16_t*>(table.raw_data());
  for (int64_t i = 0; i < table.size(); ++i) bits[i] = FloatToHalfBits(static_cast<float>(i % 251 - 125) / 256.0f);
  test::ModelBuilder b;
  b.Input("ids", DataType::kInt64, {4}).Input("x", DataType::kFloat, {2, kCols});
  b.Initializer("table", table);
  b.Node("Gather", {"table", "ids"}, {"gh"});
  b.Node("Relu", {"gh"}, {"eh"});  // a body node next to Gather: Gather computes in float too
  b.Node("Cast", {"eh"}, {"emb"}).attributes.push_back(test::IntAttr("to", static_cast<int64_t>(DataType::kFloat)));
  b.Node("Cast", {"x"}, {"xh"}).attributes.push_back(test::IntAttr("to", static_cast<int64_t>(DataType::kFloat16)));
  b.Node("Transpose", {"table"}, {"tt"}).attributes.push_back(test::IntsAttr("perm", {1, 0}));
  b.Node("MatMul", {"xh", "tt"}, {"lh"});
  b.Node("Cast", {"lh"}, {"logits"}).attributes.push_back(test::IntAttr("to", static_cast<int64_t>(DataType::kFloat)));
  b.Output("emb", DataType::kFloat, {4, kCols}).Output("logits", DataType::kFloat, {2, kRows});
  const std::string bytes = b.Bytes();
  const int64_t written = HalfWeightFloatCopyBytes();
  Session session(bytes.data(), bytes.size(), SessionOptions{});
  if (CanDeferWidening()) EXPECT_EQ(HalfWeightFloatCopyBytes(), written);
  const Tensor ids = Tensor::FromVector<int64_t>(DataType::kInt64, {4}, {3, 0, 511, -2});
  const Tensor x = test::FloatTensor({2, kCols}, -0.25f, 1.0f / 128.0f);
  const auto out = session.Run({{"ids", ids}, {"x", x}});
  const Tensor& emb = out[0].tensor();
  ASSERT_EQ(emb.dtype(), DataType::kFloat);
  const int64_t rows[4] = {3, 0, 511, 510};
  for (int r = 0; r < 4; ++r)
    for (int64_t c = 0; c < kCols; ++c)
      ASSERT_EQ(emb.data<float>()[r * kCols + c], std::max(0.0f, HalfBitsToFloat(bits[rows[r] * kCols + c])))
          << r << " " << c;
  const Tensor& logits = out[1].tensor();
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < kRows; ++j) {
      double want = 0.0;
      for (int64_t c = 0; c < kCols; ++c)
        want += static_cast<double>(x.data<float>()[i * kCols + c]) * HalfBitsToFloat(bits[j * kCols + c]);
      ASSERT_NEAR(logits.data<float>()[i * kRows + j], want, 1e-4 * (1.0 + std::abs(want))) << i << " " << j;
    }
}

// The pass defers the weight (its MatMul reads a Cast's output), then constant folding finds the
// MatMul's other input constant and computes it: the folding writes the weight's values first.
TEST(HalfWidenDeferred, ConstantFoldingWritesTheValuesItReads) {
  const Tensor c = test::FloatTensor({kM, kK}, -0.5f, 1.0f / 512.0f);
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {kM, kN}).Output("y", DataType::kFloat, {kM, kN});
  b.Initializer("w", HalfWeight()).Initializer("c", c);
  b.Node("Cast", {"c"}, {"ch"}).attributes.push_back(test::IntAttr("to", static_cast<int64_t>(DataType::kFloat16)));
  b.Node("MatMul", {"ch", "w"}, {"mh"});
  b.Node("Cast", {"mh"}, {"m"}).attributes.push_back(test::IntAttr("to", static_cast<int64_t>(DataType::kFloat)));
  b.Node("Add", {"x", "m"}, {"y"});
  const std::string bytes = b.Bytes();
  const int64_t written = HalfWeightFloatCopyBytes();
  Session session(bytes.data(), bytes.size(), SessionOptions{});
  EXPECT_EQ(HalfWeightFloatCopyBytes() - written, kK * kN * 4);  // the one copy folding reads
  const Tensor x = test::FloatTensor({kM, kN}, 1.0f, 0.0f);
  const Tensor y = session.Run({{"x", x}})[0].tensor();
  const Tensor ref = Reference(c);
  for (int64_t i = 0; i < y.size(); ++i)
    EXPECT_NEAR(y.data<float>()[i], 1.0f + ref.data<float>()[i], 1e-4 * (1.0 + std::abs(ref.data<float>()[i]))) << i;
}

TEST(HalfWidenDeferred, ASavedOptimizedModelAndACreationCacheHoldTheValues) {
  const std::string bytes = HalfModel(false);
  const Tensor x = test::FloatTensor({kM, kK}, -0.5f, 1.0f / 512.0f);
  const Tensor ref = Reference(x);
  const auto dir = std::filesystem::temp_directory_path() / ("onyx_half_deferred_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    SessionOptions o;
    o.optimized_model_filepath = (dir / "optimized.onnx").string();
    Session s(bytes.data(), bytes.size(), o);
    ExpectBitEqual(s.Run({{"x", x}})[0].tensor(), ref);
    Session again(o.optimized_model_filepath, SessionOptions{});
    ExpectBitEqual(again.Run({{"x", x}})[0].tensor(), ref);
  }
  for (const char* round : {"miss", "hit"}) {
    SessionOptions o;
    o.config_entries["session.onyx_creation_cache_dir"] = (dir / "cache").string();
    Session s(bytes.data(), bytes.size(), o);
    EXPECT_EQ(s.creation_cache_status(), round);
    ExpectBitEqual(s.Run({{"x", x}})[0].tensor(), ref);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace onyx
