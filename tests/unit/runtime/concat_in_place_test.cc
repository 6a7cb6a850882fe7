// Concat inputs written in place (runtime/concat_in_place.h): the producers' outputs become views
// into the Concat's output, so the Concat copies nothing and their memory is never allocated.
#include <gtest/gtest.h>

#include <cmath>

#include "counting_allocator.h"
#include "model_builder.h"
#include "onnx/model_loader.h"
#include "platform/thread_pool.h"
#include "providers/provider.h"
#include "runtime/graph_plan.h"

namespace onyx {
namespace {

using test::CountingAllocator;

struct Outcome {
  std::unique_ptr<CountingAllocator> counting;  // declared first: outlives the outputs it made
  std::vector<Value> outputs;
  size_t allocations = 0;
};

// Builds and runs the plan of `b`'s graph on x, counting the allocations of one run.
Outcome RunPlan(test::ModelBuilder& b, const Tensor& x, bool parallel = false) {
  auto cpu = MakeCpuProvider();
  GraphPlan::BuildContext ctx;
  ctx.providers = {cpu.get()};
  const std::string bytes = b.Bytes();
  auto model = LoadModelFromBytes(bytes.data(), bytes.size());
  auto plan = GraphPlan::Build(*model->graph, ctx);
  Outcome outcome;
  outcome.counting = std::make_unique<CountingAllocator>();
  RunState run;
  run.allocator = outcome.counting.get();
  ThreadPool inter(2);
  if (parallel) run.inter_op_pool = &inter;
  outcome.outputs = plan->Execute(run, {Value(x)}, nullptr);
  outcome.allocations = outcome.counting->allocations();
  return outcome;
}

// Declares the static type of an intermediate value, as an exporter's value_info does.
void Declare(test::ModelBuilder& b, const std::string& name, const std::vector<int64_t>& dims) {
  b.model().graph->value_types[name] = test::ModelBuilder::Type(DataType::kFloat, dims);
}

// x -> Relu -> a, x -> Neg -> b, Concat(a, b) on `axis` -> c, c + c -> y.
test::ModelBuilder TwoBranchConcat(const Shape& x_shape, int64_t axis, const Shape& c_shape) {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, x_shape).Output("y", DataType::kFloat, c_shape);
  b.Node("Relu", {"x"}, {"a"});
  b.Node("Neg", {"x"}, {"b"});
  b.Node("Concat", {"a", "b"}, {"c"}).attributes.push_back(test::IntAttr("axis", axis));
  b.Node("Add", {"c", "c"}, {"y"});
  Declare(b, "a", x_shape);
  Declare(b, "b", x_shape);
  Declare(b, "c", c_shape);
  return b;
}

// y = 2 * Concat(Relu(x), -x) on axis 1 of an [n, ...] x, computed directly.
void ExpectTwoBranchResult(const Tensor& x, const Tensor& y) {
  const int64_t n = x.dim(0), per_image = x.size() / n;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < per_image; ++j) {
      const float v = x.data<float>()[i * per_image + j];
      ASSERT_EQ(y.data<float>()[i * 2 * per_image + j], 2 * std::max(v, 0.0f)) << i << "," << j;
      ASSERT_EQ(y.data<float>()[i * 2 * per_image + per_image + j], -2 * v) << i << "," << j;
    }
}

// Runs b's plan on x; expects `allocations` allocations in the run and the two-branch result.
void ExpectTwoBranchRun(test::ModelBuilder& b, const Tensor& x, size_t allocations, bool parallel = false) {
  const Outcome got = RunPlan(b, x, parallel);
  EXPECT_EQ(got.allocations, allocations) << ShapeToString(x.shape());
  ExpectTwoBranchResult(x, got.outputs[0].tensor());
}

TEST(ConcatInPlace, ProducersWriteIntoTheConcatOutput) {
  auto b = TwoBranchConcat({1, 4, 8, 8}, 1, {1, 8, 8, 8});
  const Tensor x = test::FloatTensor({1, 4, 8, 8}, -100.0f, 0.75f);
  ExpectTwoBranchRun(b, x, 2);  // c and y only: a and b are views into c
}

TEST(ConcatInPlace, NegativeAxisCountsFromTheEnd) {
  auto b = TwoBranchConcat({1, 4, 8, 8}, -3, {1, 8, 8, 8});
  const Tensor x = test::FloatTensor({1, 4, 8, 8}, -10.0f, 0.5f);
  ExpectTwoBranchRun(b, x, 2);
}

TEST(ConcatInPlace, InterleavedSlicesAreCopied) {
  // Two images: each input's slice is split in two pieces, so the inputs get their own memory.
  auto b = TwoBranchConcat({2, 4, 8, 8}, 1, {2, 8, 8, 8});
  const Tensor x = test::FloatTensor({2, 4, 8, 8}, -100.0f, 0.75f);
  ExpectTwoBranchRun(b, x, 4);
}

TEST(ConcatInPlace, SymbolicDimsAreBoundInEachRun) {
  auto b = TwoBranchConcat({1, 4, -1, 8}, 1, {1, 8, -1, 8});
  for (int64_t rows : {8, 5}) {
    const Tensor x = test::FloatTensor({1, 4, rows, 8}, -100.0f, 0.75f);
    ExpectTwoBranchRun(b, x, 2);
  }
}

TEST(ConcatInPlace, ParallelRunsAndUnknownShapesCopy) {
  auto b = TwoBranchConcat({1, 4, 8, 8}, 1, {1, 8, 8, 8});
  const Tensor x = test::FloatTensor({1, 4, 8, 8}, -100.0f, 0.75f);
  ExpectTwoBranchRun(b, x, 4, /*parallel=*/true);
  // Without the input's rank nothing can be placed.
  auto unranked = TwoBranchConcat({1, 4, 8, 8}, 1, {1, 8, 8, 8});
  for (auto* io : {&unranked.model().graph->inputs[0], &unranked.model().graph->outputs[0]})
    io->type = TypeInfo::Tensor(DataType::kFloat);
  for (const char* name : {"a", "b", "c"}) unranked.model().graph->value_types.erase(name);
  ExpectTwoBranchRun(unranked, x, 4);
}

TEST(ConcatInPlace, ShapeDifferentFromThePlanGetsItsOwnMemory) {
  // The model says 4 channels but the run gets 2 (the plan's Execute does not check feeds):
  // nothing may be written in place.
  auto b = TwoBranchConcat({1, 4, 8, 8}, 1, {1, 8, 8, 8});
  const Tensor x = test::FloatTensor({1, 2, 8, 8}, -30.0f, 0.25f);
  ExpectTwoBranchRun(b, x, 4);
}

TEST(ConcatInPlace, GraphOutputsAndValuesReadLaterStayCorrect) {
  // a is also a graph output (kept in its own memory); b is read again after the Concat.
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {1, 4, 4, 4})
      .Output("a", DataType::kFloat, {1, 4, 4, 4})
      .Output("y", DataType::kFloat, {1, 8, 4, 4})
      .Output("z", DataType::kFloat, {1, 4, 4, 4});
  b.Node("Relu", {"x"}, {"a"});
  b.Node("Neg", {"x"}, {"b"});
  b.Node("Concat", {"a", "b"}, {"y"}).attributes.push_back(test::IntAttr("axis", 1));
  b.Node("Add", {"b", "b"}, {"z"});
  Declare(b, "b", {1, 4, 4, 4});
  const Tensor x = test::FloatTensor({1, 4, 4, 4}, -20.0f, 0.5f);
  const Outcome got = RunPlan(b, x);
  EXPECT_EQ(got.allocations, 3u);  // a, y, z: b lives in y
  const Tensor& a = got.outputs[0].tensor();
  const Tensor& z = got.outputs[2].tensor();
  for (int64_t i = 0; i < x.size(); ++i) {
    const float v = x.data<float>()[i];
    ASSERT_EQ(a.data<float>()[i], std::max(v, 0.0f));
    ASSERT_EQ(z.data<float>()[i], -2 * v);
    ASSERT_EQ(got.outputs[1].tensor().data<float>()[i], std::max(v, 0.0f));
    ASSERT_EQ(got.outputs[1].tensor().data<float>()[x.size() + i], -v);
  }
}

}  // namespace
}  // namespace onyx
