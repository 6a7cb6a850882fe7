// In-place reuse (OpKernel::InPlaceInputsFor): an elementwise output takes over an input's buffer
// when the input is an intermediate this node reads last and nothing else refers to its bytes.
// Each case checks the count of outputs made in place, the allocations of the Run, and the
// result against values computed here.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "counting_allocator.h"
#include "model_builder.h"
#include "onnx/model_loader.h"
#include "platform/thread_pool.h"
#include "providers/provider.h"
#include "runtime/graph_plan.h"
#include "runtime/run_memory.h"
#include "runtime/session_impl.h"

namespace onyx {
namespace {

using test::CountingAllocator;

struct Outcome {
  std::unique_ptr<CountingAllocator> counting;  // declared first: outlives the outputs it made
  std::vector<Value> outputs;
  size_t allocations = 0;
  int64_t in_place = 0;
};

struct Options {
  bool release_early = true;  // SessionOptions::enable_mem_reuse
  bool parallel = false;
};

Outcome RunPlan(test::ModelBuilder& b, std::vector<Value> inputs, Options options = {}) {
  auto cpu = MakeCpuProvider();
  GraphPlan::BuildContext ctx;
  ctx.providers = {cpu.get()};
  ctx.release_early = options.release_early;
  const std::string bytes = b.Bytes();
  auto model = LoadModelFromBytes(bytes.data(), bytes.size());
  auto plan = GraphPlan::Build(*model->graph, ctx);
  Outcome outcome;
  outcome.counting = std::make_unique<CountingAllocator>();
  RunState run;
  run.allocator = outcome.counting.get();
  ThreadPool inter(2);
  if (options.parallel) run.inter_op_pool = &inter;
  outcome.outputs = plan->Execute(run, std::move(inputs), nullptr);
  outcome.allocations = outcome.counting->allocations();
  outcome.in_place = run.in_place_outputs;
  return outcome;
}

float Relu(float v) { return v < 0 ? 0.0f : v; }
float Sigmoid(float v) { return 1.0f / (1.0f + std::exp(-v)); }

void ExpectNear(const Tensor& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got.data<float>()[i], want[i], 1e-6f) << i;
}

void ExpectBitEqual(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.shape(), b.shape());
  EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), static_cast<size_t>(a.byte_size())), 0);
}

// x -> Relu -> a -> Neg -> b -> Sigmoid -> c -> Exp -> y.
test::ModelBuilder Chain() {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {4, 5}).Output("y", DataType::kFloat, {4, 5});
  b.Node("Relu", {"x"}, {"a"});
  b.Node("Neg", {"a"}, {"b"});
  b.Node("Sigmoid", {"b"}, {"c"});
  b.Node("Exp", {"c"}, {"y"});
  return b;
}

TEST(InPlaceReuse, ChainReusesOneBufferAndMatchesSeparateBuffers) {
  const Tensor x = test::PatternTensor({4, 5}, 7);
  test::ModelBuilder b = Chain();
  const Outcome reused = RunPlan(b, {Value(x)});
  // Neg and Sigmoid write over their inputs; Relu reads a graph input and Exp makes the output.
  EXPECT_EQ(reused.in_place, 2);
  EXPECT_EQ(reused.allocations, 2u);
  std::vector<float> want;
  for (int64_t i = 0; i < x.size(); ++i) want.push_back(std::exp(Sigmoid(-Relu(x.data<float>()[i]))));
  ExpectNear(reused.outputs[0].tensor(), want);

  const Outcome separate = RunPlan(b, {Value(x)}, Options{.release_early = false});
  EXPECT_EQ(separate.in_place, 0);
  EXPECT_EQ(separate.allocations, 4u);
  ExpectBitEqual(reused.outputs[0].tensor(), separate.outputs[0].tensor());
}

TEST(InPlaceReuse, GraphInputsAndInitializersAreNeverWrittenOver) {
  const Tensor x = test::PatternTensor({2, 3}, 3);
  const Tensor w = test::PatternTensor({2, 3}, 11);
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {2, 3}).Output("y", DataType::kFloat, {2, 3});
  b.Initializer("w", w);
  b.Node("Neg", {"x"}, {"a"});     // x: a graph input
  b.Node("Relu", {"w"}, {"r"});    // w: an initializer
  b.Node("Add", {"w", "a"}, {"c"});  // a may go, w not
  b.Node("Mul", {"c", "r"}, {"y"});
  const Tensor x_copy = x.Clone(), w_copy = w.Clone();
  const Outcome got = RunPlan(b, {Value(x)});
  EXPECT_EQ(got.in_place, 1);  // Add over a
  std::vector<float> want;
  for (int64_t i = 0; i < x.size(); ++i) {
    const float xv = x_copy.data<float>()[i], wv = w_copy.data<float>()[i];
    want.push_back((wv - xv) * Relu(wv));
  }
  ExpectNear(got.outputs[0].tensor(), want);
  ExpectBitEqual(x, x_copy);
  ExpectBitEqual(w, w_copy);
}

TEST(InPlaceReuse, ValueReadByALaterNodeKeepsItsBuffer) {
  const Tensor x = test::PatternTensor({3, 4}, 5);
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {3, 4}).Output("y", DataType::kFloat, {3, 4});
  b.Node("Relu", {"x"}, {"a"});
  b.Node("Sigmoid", {"a"}, {"s"});  // a is read again below: not in place
  b.Node("Mul", {"s", "a"}, {"c"});  // both read last here: c takes s's buffer
  b.Node("Neg", {"c"}, {"y"});
  const Outcome got = RunPlan(b, {Value(x)});
  EXPECT_EQ(got.in_place, 1);
  std::vector<float> want;
  for (int64_t i = 0; i < x.size(); ++i) {
    const float a = Relu(x.data<float>()[i]);
    want.push_back(-(Sigmoid(a) * a));
  }
  ExpectNear(got.outputs[0].tensor(), want);
}

TEST(InPlaceReuse, BufferSharedWithALiveReshapeIsKept) {
  const Tensor x = test::PatternTensor({2, 6}, 9);
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {2, 6}).Output("y", DataType::kFloat, {2, 6});
  b.Initializer("shape", Tensor::FromVector<int64_t>(DataType::kInt64, {2}, {2, 6}));
  b.Node("Relu", {"x"}, {"a"});
  b.Node("Reshape", {"a", "shape"}, {"r"});  // r shares a's bytes
  b.Node("Neg", {"a"}, {"n"});               // a's last reader, but r still holds its bytes
  b.Node("Sub", {"n", "r"}, {"c"});          // c takes n's buffer
  b.Node("Neg", {"c"}, {"y"});
  const Outcome got = RunPlan(b, {Value(x)});
  EXPECT_EQ(got.in_place, 1);
  std::vector<float> want;
  for (int64_t i = 0; i < x.size(); ++i) want.push_back(2 * Relu(x.data<float>()[i]));
  ExpectNear(got.outputs[0].tensor(), want);
}

TEST(InPlaceReuse, ReshapeOutputHandsOnTheBufferOnceAlone) {
  const Tensor x = test::PatternTensor({2, 6}, 13);
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {2, 6}).Output("y", DataType::kFloat, {3, 4});
  b.Initializer("shape", Tensor::FromVector<int64_t>(DataType::kInt64, {2}, {3, 4}));
  b.Node("Relu", {"x"}, {"a"});
  b.Node("Reshape", {"a", "shape"}, {"r"});  // a's last reader: r holds a's bytes alone
  b.Node("Neg", {"r"}, {"n"});               // n takes them
  b.Node("Sigmoid", {"n"}, {"y"});
  const Outcome got = RunPlan(b, {Value(x)});
  EXPECT_EQ(got.in_place, 1);
  EXPECT_EQ(got.allocations, 2u);
  std::vector<float> want;
  for (int64_t i = 0; i < x.size(); ++i) want.push_back(Sigmoid(-Relu(x.data<float>()[i])));
  ExpectNear(got.outputs[0].tensor(), want);
}

TEST(InPlaceReuse, BroadcastOperandIsNotTakenOver) {
  const Tensor x = test::PatternTensor({3, 4}, 17);
  const Tensor row = test::PatternTensor({4}, 19);
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {3, 4}).Input("row", DataType::kFloat, {4}).Output("y", DataType::kFloat, {3, 4});
  b.Node("Neg", {"row"}, {"q"});     // [4], read last by the Add but broadcast there
  b.Node("Add", {"q", "x"}, {"c"});  // x is a graph input: nothing to take
  b.Node("Relu", {"c"}, {"y"});
  const Outcome got = RunPlan(b, {Value(x), Value(row)});
  EXPECT_EQ(got.in_place, 0);
  std::vector<float> want;
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j) want.push_back(Relu(x.data<float>()[i * 4 + j] - row.data<float>()[j]));
  ExpectNear(got.outputs[0].tensor(), want);
}

TEST(InPlaceReuse, ParallelExecutorAndNoMemReuseMakeSeparateBuffers) {
  const Tensor x = test::PatternTensor({4, 4}, 23);
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {4, 4}).Output("y", DataType::kFloat, {4, 4});
  b.Node("Relu", {"x"}, {"a"});
  b.Node("Neg", {"x"}, {"n"});
  b.Node("Sigmoid", {"a"}, {"s"});   // in place in a sequential run
  b.Node("Add", {"s", "n"}, {"c"});  // in place in a sequential run
  b.Node("Neg", {"c"}, {"y"});
  const Outcome sequential = RunPlan(b, {Value(x)});
  EXPECT_EQ(sequential.in_place, 2);
  const Outcome parallel = RunPlan(b, {Value(x)}, Options{.parallel = true});
  EXPECT_EQ(parallel.in_place, 0);
  EXPECT_EQ(parallel.allocations, 5u);
  const Outcome no_reuse = RunPlan(b, {Value(x)}, Options{.release_early = false});
  EXPECT_EQ(no_reuse.in_place, 0);
  EXPECT_EQ(no_reuse.allocations, 5u);
  ExpectBitEqual(sequential.outputs[0].tensor(), parallel.outputs[0].tensor());
  ExpectBitEqual(sequential.outputs[0].tensor(), no_reuse.outputs[0].tensor());
}

// The session's switches: enable_mem_reuse off, or config onyx.memory.in_place_reuse = "0", gives
// every value its own buffer; the results are the same bits.
TEST(InPlaceReuse, SessionOptionsTurnItOff) {
  test::ModelBuilder b = Chain();
  const std::string bytes = b.Bytes();
  const Tensor x = test::PatternTensor({4, 5}, 29);
  auto run = [&](SessionOptions options, int64_t in_place) {
    options.graph_optimization_level = GraphOptimizationLevel::kDisabled;
    Session s(bytes.data(), bytes.size(), options);
    auto out = s.Run({{"x", x}});
    EXPECT_EQ(s.impl().in_place_outputs(), in_place);
    return out[0].tensor();
  };
  const Tensor on = run(SessionOptions{}, 2);
  SessionOptions no_reuse;
  no_reuse.enable_mem_reuse = false;
  ExpectBitEqual(on, run(no_reuse, 0));
  SessionOptions off;
  off.config_entries[kConfigInPlaceReuse] = "0";
  ExpectBitEqual(on, run(off, 0));
  SessionOptions bad;
  bad.config_entries[kConfigInPlaceReuse] = "yes";
  EXPECT_THROW(Session(bytes.data(), bytes.size(), bad), Error);
}

}  // namespace
}  // namespace onyx
