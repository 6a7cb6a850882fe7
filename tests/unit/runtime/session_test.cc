#include "onyx/session.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "counting_allocator.h"
#include "model_builder.h"
#include "onnx/model_loader.h"
#include "runtime/graph_plan.h"
#include "runtime/session_impl.h"

namespace onyx {
namespace {

// y = (x + w) * x, with x [batch, 4] and a constant w [4].
std::string SmallModel() {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {-1, 4}).Output("y", DataType::kFloat, {-1, 4});
  b.Initializer("w", test::FloatTensor({4}, 0.5f));
  b.Node("Add", {"x", "w"}, {"s"});
  b.Node("Mul", {"s", "x"}, {"y"});
  return b.Bytes();
}

std::string ErrorOf(const Session& s, const NamedValues& feeds, const std::vector<std::string>& outputs = {}) {
  try {
    s.Run(feeds, outputs);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    return e.what();
  }
  ADD_FAILURE() << "expected an error";
  return "";
}

TEST(Session, ReportsMetadataWithSymbolicDims) {
  const std::string bytes = SmallModel();
  Session s(bytes.data(), bytes.size());
  ASSERT_EQ(s.inputs().size(), 1u);
  EXPECT_EQ(s.inputs()[0].name, "x");
  EXPECT_EQ(s.inputs()[0].type->ToString(), "tensor(float)[d0,4]");
  EXPECT_EQ(s.outputs()[0].name, "y");
  EXPECT_EQ(s.metadata().opset_imports.at(""), 17);
}

TEST(Session, FeedErrorsNameTheInputExpectedAndActual) {
  const std::string bytes = SmallModel();
  Session s(bytes.data(), bytes.size());
  const Tensor good = test::FloatTensor({2, 4});
  std::string e = ErrorOf(s, {{"nope", good}});
  EXPECT_NE(e.find("'nope'"), std::string::npos) << e;
  EXPECT_NE(e.find("x"), std::string::npos) << e;

  e = ErrorOf(s, {});
  EXPECT_NE(e.find("'x'"), std::string::npos) << e;
  EXPECT_NE(e.find("not fed"), std::string::npos) << e;

  e = ErrorOf(s, {{"x", Tensor(DataType::kInt64, {2, 4})}});
  EXPECT_NE(e.find("int64"), std::string::npos) << e;
  EXPECT_NE(e.find("tensor(float)"), std::string::npos) << e;

  e = ErrorOf(s, {{"x", test::FloatTensor({8})}});
  EXPECT_NE(e.find("rank 1 instead of 2"), std::string::npos) << e;

  e = ErrorOf(s, {{"x", test::FloatTensor({2, 5})}});
  EXPECT_NE(e.find("dimension 1 is 5 instead of 4"), std::string::npos) << e;

  e = ErrorOf(s, {{"x", good}}, {"missing_output"});
  EXPECT_NE(e.find("'missing_output'"), std::string::npos) << e;
}

TEST(Session, ComputesAndSelectsOutputs) {
  const std::string bytes = SmallModel();
  Session s(bytes.data(), bytes.size());
  auto out = s.Run({{"x", test::FloatTensor({3, 4}, 1.0f)}}, {"y"});
  ASSERT_EQ(out.size(), 1u);
  const Tensor& y = out[0].tensor();
  EXPECT_EQ(y.shape(), (Shape{3, 4}));
  for (int64_t i = 0; i < 12; ++i) {
    const float x = 1.0f + static_cast<float>(i);
    const float w = 0.5f + static_cast<float>(i % 4);
    EXPECT_FLOAT_EQ(y.data<float>()[i], (x + w) * x);
  }
}

TEST(Session, EightThreadsGetTheSameOutputsAsOne) {
  const std::string bytes = SmallModel();
  SessionOptions options;
  options.intra_op_num_threads = 2;
  Session s(bytes.data(), bytes.size(), options);
  constexpr int kThreads = 8, kRunsEach = 50;
  std::vector<Tensor> inputs, expected;
  for (int t = 0; t < kThreads; ++t) {
    inputs.push_back(test::FloatTensor({64, 4}, static_cast<float>(t), 0.25f));
    expected.push_back(s.Run({{"x", inputs.back()}})[0].tensor());
  }
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRunsEach; ++r) {
        const Tensor got = s.Run({{"x", inputs[t]}})[0].tensor();
        for (int64_t i = 0; i < got.size(); ++i)
          if (got.data<float>()[i] != expected[t].data<float>()[i]) ++mismatches;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
}

using test::CountingAllocator;

TEST(GraphPlan, ReleasesIntermediatesAfterTheirLastUse) {
  // A chain of 12 Adds over 1 MiB tensors: with release, at most ~3 are alive at once.
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {256, 1024}).Output("v12", DataType::kFloat, {256, 1024});
  std::string prev = "x";
  for (int i = 1; i <= 12; ++i) {
    const std::string out = "v" + std::to_string(i);
    b.Node("Add", {prev, prev}, {out});
    prev = out;
  }
  const std::string bytes = b.Bytes();
  auto model = LoadModelFromBytes(bytes.data(), bytes.size());
  auto cpu = MakeCpuProvider();
  GraphPlan::BuildContext ctx;
  ctx.providers = {cpu.get()};
  auto plan = GraphPlan::Build(*model->graph, ctx);
  CountingAllocator counting;
  RunState run;
  run.allocator = &counting;
  const size_t one = 256 * 1024 * sizeof(float);
  auto outputs = plan->Execute(run, {Value(test::FloatTensor({256, 1024}, 0.0f, 0.0f))}, nullptr);
  EXPECT_LE(counting.peak(), 2 * one) << "peak " << counting.peak() << " bytes";
  EXPECT_EQ(outputs[0].tensor().data<float>()[0], 0.0f);
}

}  // namespace
}  // namespace onyx

namespace onyx {
namespace {

TEST(SessionOptions, IntraOpThreadsSizeThePool) {
  const std::string bytes = SmallModel();
  for (int n : {1, 3}) {
    SessionOptions options;
    options.intra_op_num_threads = n;
    Session s(bytes.data(), bytes.size(), options);
    EXPECT_EQ(s.impl().thread_pool()->num_threads(), n);
  }
  SessionOptions bad;
  bad.intra_op_num_threads = -1;
  EXPECT_THROW(Session(bytes.data(), bytes.size(), bad), Error);
}

TEST(SessionOptions, UnknownExecutionProviderIsAnError) {
  const std::string bytes = SmallModel();
  SessionOptions options;
  options.execution_providers = {"NoSuchEP"};
  try {
    Session s(bytes.data(), bytes.size(), options);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("NoSuchEP"), std::string::npos);
  }
}

TEST(RunOptions, RunTagNamesTheRunInErrors) {
  // Add of [2,4] and [3] fails at run time (shapes do not broadcast).
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {-1, -1}).Output("y", DataType::kFloat, {-1, -1});
  b.Initializer("w", test::FloatTensor({3}));
  b.Node("Add", {"x", "w"}, {"y"});
  const std::string bytes = b.Bytes();
  Session s(bytes.data(), bytes.size());
  RunOptions run_options;
  run_options.run_tag = "request-42";
  try {
    s.Run({{"x", test::FloatTensor({2, 4})}}, {}, run_options);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.code(), ErrorCode::kRuntime);
    EXPECT_NE(what.find("run 'request-42'"), std::string::npos) << what;
    EXPECT_NE(what.find("Add"), std::string::npos) << what;
    EXPECT_NE(what.find("float[2,4]"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace onyx

namespace onyx {
namespace {

std::string ChainModel() {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {256, 1024}).Output("v6", DataType::kFloat, {256, 1024});
  std::string prev = "x";
  for (int i = 1; i <= 6; ++i) {
    b.Node("Add", {prev, prev}, {"v" + std::to_string(i)});
    prev = "v" + std::to_string(i);
  }
  return b.Bytes();
}

TEST(Arena, SecondRunReusesBlocks) {
  const std::string bytes = ChainModel();
  Session s(bytes.data(), bytes.size());
  const Tensor x = test::FloatTensor({256, 1024}, 0.0f, 0.0f);
  s.Run({{"x", x}});
  const size_t after_first = s.impl().arena()->stats().backing_allocations;
  for (int i = 0; i < 3; ++i) s.Run({{"x", x}});
  EXPECT_EQ(s.impl().arena()->stats().backing_allocations, after_first);
  // The output, and the pattern block: the two intermediates alive at once and a quarter more.
  EXPECT_LE(s.impl().arena()->stats().peak_reserved, 3u * 256 * 1024 * 4 + 256 * 1024 * 4 / 2 + 65536);
}

TEST(Arena, OffMeansNoArena) {
  const std::string bytes = ChainModel();
  SessionOptions options;
  options.enable_cpu_mem_arena = false;
  Session s(bytes.data(), bytes.size(), options);
  EXPECT_EQ(s.impl().arena(), nullptr);
  EXPECT_EQ(s.Run({{"x", test::FloatTensor({256, 1024}, 1.0f, 0.0f)}})[0].tensor().data<float>()[7], 64.0f);
}

TEST(Arena, CapIsAClearError) {
  const std::string bytes = ChainModel();
  SessionOptions options;
  options.cpu_arena_max_bytes = 1u << 20;  // one 1 MiB buffer; the chain needs two at once
  Session s(bytes.data(), bytes.size(), options);
  try {
    s.Run({{"x", test::FloatTensor({256, 1024})}});
    FAIL() << "expected the cap to be hit";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kOutOfMemory);
    EXPECT_NE(std::string(e.what()).find("arena cap"), std::string::npos) << e.what();
  }
}

TEST(Arena, ShrinkAfterRunReturnsCachedBlocks) {
  const std::string bytes = ChainModel();
  Session s(bytes.data(), bytes.size());
  RunOptions shrink;
  shrink.shrink_arena_after_run = true;
  auto out = s.Run({{"x", test::FloatTensor({256, 1024})}}, {}, shrink);
  // Only the output stays reserved.
  EXPECT_EQ(s.impl().arena()->stats().reserved, s.impl().arena()->stats().in_use);
}

TEST(Arena, OutputsOutliveTheSession) {
  const std::string bytes = ChainModel();
  Tensor kept;
  {
    Session s(bytes.data(), bytes.size());
    kept = s.Run({{"x", test::FloatTensor({256, 1024}, 2.0f, 0.0f)}})[0].tensor();
  }
  EXPECT_EQ(kept.data<float>()[100], 128.0f);
}

}  // namespace
}  // namespace onyx
