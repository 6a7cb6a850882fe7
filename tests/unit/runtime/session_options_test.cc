// SessionOptions that reshape the model or the Run's memory: free dimension overrides,
// caller-supplied initializers, enable_mem_reuse.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "model_builder.h"
#include "onyx/session.h"
#include "runtime/session_impl.h"

namespace onyx {
namespace {

// y = x + w, x [N, 3] with N symbolic ("batch"), w = [1, 1, 1].
std::string AddModel() {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {-1, 3}).Output("y", DataType::kFloat, {-1, 3});
  b.model().graph->inputs[0].type = TypeInfo::Tensor(DataType::kFloat, std::vector<Dim>{{-1, "batch"}, {3, ""}});
  b.model().graph->outputs[0].type = TypeInfo::Tensor(DataType::kFloat, std::vector<Dim>{{-1, "batch"}, {3, ""}});
  b.Initializer("w", test::FloatTensor({3}, 1.0f, 0.0f));
  b.Node("Add", {"x", "w"}, {"y"});
  return b.Bytes();
}

Error CreateError(const SessionOptions& options) {
  const std::string bytes = AddModel();
  try {
    Session s(bytes.data(), bytes.size(), options);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "expected an error";
  return Error(ErrorCode::kFail, "");
}

TEST(SessionOptions, FreeDimensionOverrideFixesTheInput) {
  const std::string bytes = AddModel();
  SessionOptions options;
  options.free_dimension_overrides_by_name["batch"] = 2;
  Session s(bytes.data(), bytes.size(), options);
  EXPECT_EQ(s.inputs()[0].type->ToString(), "tensor(float)[2,3]");
  EXPECT_EQ(s.outputs()[0].type->ToString(), "tensor(float)[2,3]");
  auto out = s.Run({{"x", test::FloatTensor({2, 3})}});
  EXPECT_EQ(out[0].tensor().data<float>()[5], 6.0f);  // 5 + 1
  try {
    s.Run({{"x", test::FloatTensor({5, 3})}});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(what.find("input 'x'"), std::string::npos) << what;
    EXPECT_NE(what.find("dimension 0 is 5 instead of 2"), std::string::npos) << what;
  }
  // Without the override the same feed runs.
  Session free(bytes.data(), bytes.size());
  EXPECT_EQ(free.inputs()[0].type->ToString(), "tensor(float)[batch,3]");
  EXPECT_EQ(free.Run({{"x", test::FloatTensor({5, 3})}})[0].tensor().shape(), (Shape{5, 3}));
}

TEST(SessionOptions, FreeDimensionOverrideErrorsNameTheDim) {
  SessionOptions options;
  options.free_dimension_overrides_by_name["batchsize"] = 2;
  Error e = CreateError(options);
  EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(std::string(e.what()).find("'batchsize'"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("batch)"), std::string::npos) << e.what();  // the model's own

  options.free_dimension_overrides_by_name = {{"batch", -4}};
  e = CreateError(options);
  EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(std::string(e.what()).find("'batch' is -4"), std::string::npos) << e.what();
}

TEST(SessionOptions, InitializerReplacesTheModelsWithoutACopy) {
  const std::string bytes = AddModel();
  auto storage = std::make_shared<std::vector<float>>(std::vector<float>{10, 20, 30});
  SessionOptions options;
  options.initializers.emplace_back("w", Tensor::View(DataType::kFloat, {3}, storage->data(), storage));
  Session s(bytes.data(), bytes.size(), options);
  options.initializers.clear();
  EXPECT_GT(storage.use_count(), 1);  // the session holds the caller's bytes
  auto out = s.Run({{"x", test::FloatTensor({1, 3})}});
  const float* y = out[0].tensor().data<float>();
  EXPECT_EQ(std::vector<float>(y, y + 3), (std::vector<float>{10, 21, 32}));
  // Bytes shared, not copied: the session sees a change made to them.
  (*storage)[0] = 100;
  out = s.Run({{"x", test::FloatTensor({1, 3})}});
  EXPECT_EQ(out[0].tensor().data<float>()[0], 100.0f);
}

TEST(SessionOptions, InitializerErrorsNameIt) {
  SessionOptions options;
  options.initializers.emplace_back("v", test::FloatTensor({3}));
  Error e = CreateError(options);
  EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(std::string(e.what()).find("'v' given in SessionOptions::initializers is not an initializer"),
            std::string::npos)
      << e.what();

  options.initializers = {{"w", test::FloatTensor({4})}};
  e = CreateError(options);
  EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(std::string(e.what()).find("'w' is float[3] in the model"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("float[4]"), std::string::npos) << e.what();

  options.initializers = {{"w", Tensor(DataType::kDouble, {3})}};
  e = CreateError(options);
  EXPECT_NE(std::string(e.what()).find("double[3]"), std::string::npos) << e.what();
}

// A chain of 8 unary nodes over 64 KiB values: with reuse a value's block serves a later one;
// without it all 7 intermediates are alive at the end.
std::string ChainModel() {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {16384}).Output("y", DataType::kFloat, {16384});
  std::string prev = "x";
  for (int i = 0; i < 8; ++i) {
    const std::string next = i == 7 ? "y" : "t" + std::to_string(i);
    b.Node(i % 2 == 0 ? "Neg" : "Abs", {prev}, {next});
    prev = next;
  }
  return b.Bytes();
}

size_t PeakReserved(bool reuse) {
  const std::string bytes = ChainModel();
  SessionOptions options;
  options.enable_mem_reuse = reuse;
  options.enable_mem_pattern = false;
  options.graph_optimization_level = GraphOptimizationLevel::kDisabled;
  Session s(bytes.data(), bytes.size(), options);
  auto out = s.Run({{"x", test::FloatTensor({16384})}});
  EXPECT_EQ(out[0].tensor().data<float>()[3], 3.0f);  // |-x| after an even number of Negs
  return s.impl().arena()->stats().peak_reserved;
}

TEST(SessionOptions, WithoutMemReuseEveryIntermediateLivesToTheEnd) {
  const size_t block = 16384 * sizeof(float);
  const size_t with_reuse = PeakReserved(true), without = PeakReserved(false);
  EXPECT_LE(with_reuse, 3 * block) << with_reuse;
  EXPECT_GE(without, 8 * block) << without;
}

}  // namespace
}  // namespace onyx

namespace onyx {
namespace {

// Reductions split across threads (one long run into chunks), a product and a softmax.
std::string ReductionModel() {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {1, 1 << 18}).Input("a", DataType::kFloat, {64, 512});
  b.Output("s", DataType::kFloat, {1, 1}).Output("m", DataType::kFloat, {64, 1});
  b.Initializer("w", test::FloatTensor({512, 256}, -1.0f, 1.0f / 65536));
  b.Node("ReduceSum", {"x"}, {"s"});
  b.Node("MatMul", {"a", "w"}, {"p"});
  b.Node("Softmax", {"p"}, {"q"});
  b.Node("ReduceMean", {"q"}, {"m"}).attributes.push_back(test::IntsAttr("axes", {1}));
  return b.Bytes();
}

// Values whose float sums depend on the order they are added in.
Tensor Irregular(const Shape& shape) {
  Tensor t(DataType::kFloat, shape);
  uint32_t state = 12345;
  for (int64_t i = 0; i < t.size(); ++i) {
    state = state * 1664525u + 1013904223u;
    t.data<float>()[i] = static_cast<float>(state >> 8) * 1e-7f * ((state & 1) ? 1.0f : -1000.0f);
  }
  return t;
}

bool SameBits(const std::vector<Value>& a, const std::vector<Value>& b) {
  for (size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(a[i].tensor().raw_data(), b[i].tensor().raw_data(), a[i].tensor().byte_size()) != 0) return false;
  return true;
}

TEST(SessionOptions, DeterministicComputeGivesTheSameBitsEveryRun) {
  const std::string bytes = ReductionModel();
  const NamedValues feeds = {{"x", Irregular({1, 1 << 18})}, {"a", Irregular({64, 512})}};
  for (int threads : {1, 2, 4}) {
    for (const char* block_base : {"0", "4"}) {
      for (ExecutionMode mode : {ExecutionMode::kSequential, ExecutionMode::kParallel}) {
        SessionOptions options;
        options.use_deterministic_compute = true;
        options.intra_op_num_threads = threads;
        options.execution_mode = mode;
        options.inter_op_num_threads = 2;
        options.config_entries["session.dynamic_block_base"] = block_base;
        Session s(bytes.data(), bytes.size(), options);
        const auto first = s.Run(feeds);
        for (int run = 0; run < 4; ++run) {
          // Two Runs at once compete for the threads, so blocks finish in varying order.
          std::vector<Value> other;
          std::thread t([&] { other = s.Run(feeds); });
          const auto mine = s.Run(feeds);
          t.join();
          EXPECT_TRUE(SameBits(first, mine)) << threads << " threads, block base " << block_base;
          EXPECT_TRUE(SameBits(first, other)) << threads << " threads, block base " << block_base;
        }
      }
    }
  }
}

}  // namespace
}  // namespace onyx
