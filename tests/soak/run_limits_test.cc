// Run-time size limits (onyx.run.max_tensor_bytes): a model whose Expand, Tile, ConstantOfShape,
// Range or MelWeightMatrix asks at run time for ~2^40 elements fails at once with an Error naming
// the node, its op and opset, its inputs and the shape asked for, never with an OOM kill or
// std::bad_alloc; a configured limit is honoured to the byte, for feeds too, and the session
// runs on afterwards.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>

#include "model_builder.h"
#include "onyx/session.h"
#include "runtime/session_impl.h"
#include "tensor/arena_allocator.h"
#include "soak_util.h"

namespace onyx {
namespace {

constexpr int64_t kSide = int64_t{1} << 20;  // kSide x kSide = 2^40 elements

struct Case {
  std::string op;
  std::string model;        // serialized
  NamedValues huge_feeds;   // ask for 2^40 elements
  std::string huge_shape;   // as the error prints it
};

std::string ExpandModel() {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {1}).Input("shape", DataType::kInt64, {2}).Output("y", DataType::kFloat, {-1, -1});
  b.Node("Expand", {"x", "shape"}, {"y"});
  return b.Bytes();
}

Case ExpandCase() {
  return {"Expand", ExpandModel(),
          {{"x", test::FloatTensor({1}, 1.5f)},
           {"shape", Tensor::FromVector<int64_t>(DataType::kInt64, {2}, {kSide, kSide})}},
          "float[1048576,1048576]"};
}

Case TileCase() {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {1, 1}).Input("repeats", DataType::kInt64, {2});
  b.Output("y", DataType::kFloat, {-1, -1});
  b.Node("Tile", {"x", "repeats"}, {"y"});
  return {"Tile", b.Bytes(),
          {{"x", test::FloatTensor({1, 1})},
           {"repeats", Tensor::FromVector<int64_t>(DataType::kInt64, {2}, {kSide, kSide})}},
          "float[1048576,1048576]"};
}

Case ConstantOfShapeCase() {
  test::ModelBuilder b;
  b.Input("shape", DataType::kInt64, {2}).Output("y", DataType::kFloat, {-1, -1});
  ir::Attribute value{"value", ir::AttrType::kTensor};
  value.t = test::FloatTensor({1}, 3.0f);
  b.Node("ConstantOfShape", {"shape"}, {"y"}).attributes.push_back(value);
  return {"ConstantOfShape", b.Bytes(),
          {{"shape", Tensor::FromVector<int64_t>(DataType::kInt64, {2}, {kSide, kSide})}},
          "float[1048576,1048576]"};
}

Case RangeCase() {
  test::ModelBuilder b;
  b.Input("start", DataType::kInt64, {}).Input("limit", DataType::kInt64, {}).Input("delta", DataType::kInt64, {});
  b.Output("y", DataType::kInt64, {-1});
  b.Node("Range", {"start", "limit", "delta"}, {"y"});
  return {"Range", b.Bytes(),
          {{"start", soak::ScalarInt64(0)}, {"limit", soak::ScalarInt64(kSide * kSide)}, {"delta", soak::ScalarInt64(1)}},
          "int64[1099511627776]"};
}

// MelWeightMatrix's output is [dft_length/2 + 1, num_mel_bins]: its filter edges and weights
// must not be computed before that size is checked (a fuzzed num_mel_bins spent 49 s there).
Case MelWeightMatrixCase() {
  test::ModelBuilder b;
  b.Input("bins", DataType::kInt64, {}).Input("dft", DataType::kInt64, {}).Input("rate", DataType::kInt64, {});
  b.Input("lower", DataType::kFloat, {}).Input("upper", DataType::kFloat, {});
  b.Output("y", DataType::kFloat, {-1, -1});
  b.Node("MelWeightMatrix", {"bins", "dft", "rate", "lower", "upper"}, {"y"});
  return {"MelWeightMatrix", b.Bytes(),
          {{"bins", soak::ScalarInt64(kSide)}, {"dft", soak::ScalarInt64(2 * kSide)},
           {"rate", soak::ScalarInt64(16000)}, {"lower", test::FloatTensor({}, 0.0f)},
           {"upper", test::FloatTensor({}, 8000.0f)}},
          "float[1048577,1048576]"};
}

// Runs `run`, expecting Error(kOutOfMemory) that names every piece of `wanted`, within a second
// or so (nothing of the 2^40 elements may be touched).
void ExpectLimitError(const std::function<void()>& run, const std::vector<std::string>& wanted) {
  const auto start = std::chrono::steady_clock::now();
  try {
    run();
    ADD_FAILURE() << "the Run succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kOutOfMemory) << e.what();
    for (const auto& piece : wanted) EXPECT_NE(std::string(e.what()).find(piece), std::string::npos) << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not an onyx::Error: " << e.what();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, ONYX_SOAK_ASAN ? 5.0 : 1.0);
}

// The shape is a constant: constant folding tries the node while the session is made, is refused
// by the CPU allocator (more than RAM + swap), and leaves it to run time.
Case ConstantFoldedShapeCase() {
  test::ModelBuilder b;
  b.Output("y", DataType::kFloat, {-1, -1});
  b.Initializer("shape", Tensor::FromVector<int64_t>(DataType::kInt64, {2}, {kSide, kSide}));
  b.Node("ConstantOfShape", {"shape"}, {"y"});
  return {"ConstantOfShape", b.Bytes(), {}, "float[1048576,1048576]"};
}

Case CaseNamed(const std::string& name) {
  if (name == "Expand") return ExpandCase();
  if (name == "Tile") return TileCase();
  if (name == "ConstantOfShape") return ConstantOfShapeCase();
  if (name == "Range") return RangeCase();
  if (name == "MelWeightMatrix") return MelWeightMatrixCase();
  return ConstantFoldedShapeCase();
}

class RunLimits2Pow40 : public ::testing::TestWithParam<std::string> {};

TEST_P(RunLimits2Pow40, FailsFastWithANamedError) {
  const Case c = CaseNamed(GetParam());
  // Every way a Run gets memory: the arena with memory patterns, the arena alone, no arena.
  for (int variant = 0; variant < 3; ++variant) {
    SCOPED_TRACE("variant " + std::to_string(variant));
    SessionOptions options;
    options.enable_mem_pattern = variant == 0;
    options.enable_cpu_mem_arena = variant != 2;
    Session s(c.model.data(), c.model.size(), options);
    ExpectLimitError([&] { s.Run(c.huge_feeds); },
                     {"node '" + c.op + "_0' (" + c.op + ", opset 17)", c.huge_shape, "onyx.run.max_tensor_bytes"});
    if (s.impl().arena() != nullptr) {
      EXPECT_EQ(s.impl().arena()->stats().in_use, 0u);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, RunLimits2Pow40,
                         ::testing::Values("Expand", "Tile", "ConstantOfShape", "Range", "MelWeightMatrix", "ConstantFoldedShape"),
                         [](const auto& info) { return info.param; });

TEST(RunLimits, TheCpuAllocatorRefusesMoreThanTheMachineHas) {
  for (Allocator* a : {CpuAllocator(), CpuArenaBackingAllocator()}) {
    try {
      a->Allocate(size_t{1} << 50);
      ADD_FAILURE() << "granted 2^50 bytes";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kOutOfMemory);
      EXPECT_NE(std::string(e.what()).find("more than this machine's memory"), std::string::npos) << e.what();
    }
  }
}

TEST(RunLimits, AConfiguredLimitHoldsToTheByte) {
  const std::string model = ExpandModel();
  SessionOptions options;
  options.config_entries["onyx.run.max_tensor_bytes"] = std::to_string(1 << 20);
  Session s(model.data(), model.size(), options);
  auto feeds = [](int64_t rows) {
    return NamedValues{{"x", test::FloatTensor({1}, 2.5f)},
                       {"shape", Tensor::FromVector<int64_t>(DataType::kInt64, {2}, {rows, 1024})}};
  };
  {
    // 256 x 1024 floats are 1 MiB: allowed, and right (every element is x).
    const std::vector<Value> ok = s.Run(feeds(256));
    ASSERT_EQ(ok[0].tensor().shape(), (Shape{256, 1024}));
    for (int64_t i = 0; i < ok[0].tensor().size(); i += 1023) ASSERT_EQ(ok[0].tensor().data<float>()[i], 2.5f) << i;
  }
  // One row more is over.
  ExpectLimitError([&] { s.Run(feeds(257)); },
                   {"node 'Expand_0' (Expand, opset 17)", "float[257,1024]", "1052672 bytes", "limit of 1048576"});
  // The session is unharmed, and the failed Run holds nothing.
  EXPECT_EQ(s.Run(feeds(3))[0].tensor().shape(), (Shape{3, 1024}));
  EXPECT_EQ(s.impl().arena()->stats().in_use, 0u);
}

TEST(RunLimits, AFeedOverTheLimitIsRefused) {
  const std::string model = ExpandModel();
  SessionOptions options;
  options.config_entries["onyx.run.max_tensor_bytes"] = "1024";
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {-1}).Output("y", DataType::kFloat, {-1});
  b.Node("Relu", {"x"}, {"y"});
  const std::string relu = b.Bytes();
  Session s(relu.data(), relu.size(), options);
  EXPECT_EQ(s.Run({{"x", test::FloatTensor({256}, -1.0f)}})[0].tensor().data<float>()[255], 254.0f);
  ExpectLimitError([&] { s.Run({{"x", test::FloatTensor({257})}}); },
                   {"input 'x' float[257]", "1028 bytes", "onyx.run.max_tensor_bytes"});
}

TEST(RunLimits, AMalformedLimitIsAnInvalidArgument) {
  const std::string model = ExpandModel();
  for (const char* bad : {"", "0", "-5", "12abc", "99999999999999999999999"}) {
    SessionOptions options;
    options.config_entries["onyx.run.max_tensor_bytes"] = bad;
    try {
      Session s(model.data(), model.size(), options);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
      EXPECT_NE(std::string(e.what()).find("onyx.run.max_tensor_bytes"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace onyx
