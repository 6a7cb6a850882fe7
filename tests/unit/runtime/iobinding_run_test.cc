// Session::Run with preallocated outputs (IO binding): outputs are made in the caller's buffers,
// copied there only when the output is a view of another value; wrong buffers are named errors.
#include <gtest/gtest.h>

#include <vector>

#include "model_builder.h"
#include "onyx/session.h"
#include "runtime/session_impl.h"

namespace onyx {
namespace {

// y = -relu(x): one intermediate (r) and one output.
std::string ReluNegModel(int64_t rows = 2) {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {rows, 3}).Output("y", DataType::kFloat, {rows, 3});
  b.Node("Relu", {"x"}, {"r"});
  b.Node("Neg", {"r"}, {"y"});
  return b.Bytes();
}

Tensor Input() { return Tensor::FromVector<float>(DataType::kFloat, {2, 3}, {-1, 2, -3, 4, -5, 6}); }
const std::vector<float> kExpected = {0, -2, 0, -4, 0, -6};  // -relu(x) by hand

SessionOptions NoPattern() {
  SessionOptions options;
  options.enable_mem_pattern = false;  // so the arena sees every request
  return options;
}

std::string ErrorOf(const Session& s, const NamedValues& feeds, const std::vector<Value>& buffers,
                    const std::vector<std::string>& names = {}) {
  try {
    s.Run(feeds, names, buffers, RunOptions{});
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    return e.what();
  }
  ADD_FAILURE() << "expected an error";
  return "";
}

TEST(IoBindingRun, WritesTheOutputInTheCallersBuffer) {
  const std::string bytes = ReluNegModel();
  Session s(bytes.data(), bytes.size(), NoPattern());
  std::vector<float> storage(6, 42.0f);
  const Tensor buffer = Tensor::View(DataType::kFloat, {2, 3}, storage.data(), nullptr);
  auto out = s.Run({{"x", Input()}}, {"y"}, {Value(buffer)}, RunOptions{});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].tensor().raw_data(), storage.data());
  EXPECT_EQ(storage, kExpected);
  // Only the intermediate came from the arena: the Neg kernel wrote y straight into the buffer,
  // no output was allocated and copied.
  EXPECT_EQ(s.impl().arena()->stats().allocations, 1u);
  s.Run({{"x", Input()}});
  EXPECT_EQ(s.impl().arena()->stats().allocations, 3u);  // without a buffer: r and y
}

TEST(IoBindingRun, InPlaceInParallelModeToo) {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {2, 3}).Output("a", DataType::kFloat, {2, 3}).Output("n", DataType::kFloat, {2, 3});
  b.Node("Relu", {"x"}, {"a"});
  b.Node("Neg", {"x"}, {"n"});
  const std::string bytes = b.Bytes();
  SessionOptions options = NoPattern();
  options.execution_mode = ExecutionMode::kParallel;
  options.inter_op_num_threads = 2;
  Session s(bytes.data(), bytes.size(), options);
  std::vector<float> a(6), n(6);
  auto out = s.Run({{"x", Input()}}, {"n", "a"},
                   {Value(Tensor::View(DataType::kFloat, {2, 3}, n.data(), nullptr)),
                    Value(Tensor::View(DataType::kFloat, {2, 3}, a.data(), nullptr))},
                   RunOptions{});
  EXPECT_EQ(out[0].tensor().raw_data(), n.data());
  EXPECT_EQ(out[1].tensor().raw_data(), a.data());
  EXPECT_EQ(a, (std::vector<float>{0, 2, 0, 4, 0, 6}));
  EXPECT_EQ(n, (std::vector<float>{1, -2, 3, -4, 5, -6}));
  EXPECT_EQ(s.impl().arena()->stats().allocations, 0u);
}

TEST(IoBindingRun, AnOutputThatViewsAnotherValueIsCopiedIn) {
  // Reshape's output shares x's bytes, and the second output is the graph input itself.
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {2, 3}).Output("y", DataType::kFloat, {3, 2}).Output("x", DataType::kFloat, {2, 3});
  b.Initializer("shape", Tensor::FromVector<int64_t>(DataType::kInt64, {2}, {3, 2}));
  b.Node("Reshape", {"x", "shape"}, {"y"});
  const std::string bytes = b.Bytes();
  Session s(bytes.data(), bytes.size());
  std::vector<float> y(6), x(6);
  const Tensor input = Input();
  auto out = s.Run({{"x", input}}, {},
                   {Value(Tensor::View(DataType::kFloat, {3, 2}, y.data(), nullptr)),
                    Value(Tensor::View(DataType::kFloat, {2, 3}, x.data(), nullptr))},
                   RunOptions{});
  EXPECT_EQ(out[0].tensor().raw_data(), y.data());
  EXPECT_EQ(out[0].tensor().shape(), (Shape{3, 2}));
  EXPECT_EQ(out[1].tensor().raw_data(), x.data());
  const std::vector<float> want = {-1, 2, -3, 4, -5, 6};
  EXPECT_EQ(y, want);
  EXPECT_EQ(x, want);
}

TEST(IoBindingRun, ConcatSlicesAreMadeInTheCallersBuffer) {
  // y = Concat(relu(x), neg(x)) over 64-byte halves: the producers write them straight into y's
  // buffer (see concat_in_place.h), so nothing is allocated.
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {1, 16}).Output("y", DataType::kFloat, {1, 32});
  b.Node("Relu", {"x"}, {"r"});
  b.Node("Neg", {"x"}, {"n"});
  b.Node("Concat", {"r", "n"}, {"y"}).attributes.push_back(test::IntAttr("axis", 1));
  const std::string bytes = b.Bytes();
  Session s(bytes.data(), bytes.size(), NoPattern());
  auto storage = std::make_shared<std::vector<float>>(32, 9.0f);
  const Tensor buffer = Tensor::View(DataType::kFloat, {1, 32}, storage->data(), storage);
  auto out = s.Run({{"x", test::FloatTensor({1, 16}, -8.0f)}}, {}, {Value(buffer)}, RunOptions{});
  EXPECT_EQ(out[0].tensor().raw_data(), storage->data());
  for (int i = 0; i < 16; ++i) {
    const float x = -8.0f + static_cast<float>(i);
    EXPECT_EQ((*storage)[i], x > 0 ? x : 0.0f) << i;
    EXPECT_EQ((*storage)[16 + i], -x) << i;
  }
  EXPECT_EQ(s.impl().arena()->stats().allocations, 0u);
}

TEST(IoBindingRun, UndefinedEntriesAreAllocatedAsUsual) {
  const std::string bytes = ReluNegModel();
  Session s(bytes.data(), bytes.size());
  auto out = s.Run({{"x", Input()}}, {"y"}, {Value()}, RunOptions{});
  const float* y = out[0].tensor().data<float>();
  EXPECT_EQ(std::vector<float>(y, y + 6), kExpected);
}

TEST(IoBindingRun, WrongBuffersAreNamedErrors) {
  const std::string bytes = ReluNegModel();
  Session s(bytes.data(), bytes.size());
  const NamedValues feeds = {{"x", Input()}};
  std::string e = ErrorOf(s, feeds, {Value(Tensor(DataType::kInt64, {2, 3}))});
  EXPECT_NE(e.find("'y'"), std::string::npos) << e;
  EXPECT_NE(e.find("tensor(float)[2,3]"), std::string::npos) << e;
  EXPECT_NE(e.find("int64[2,3]"), std::string::npos) << e;

  e = ErrorOf(s, feeds, {Value(Tensor(DataType::kFloat, {3, 3}))});
  EXPECT_NE(e.find("'y'"), std::string::npos) << e;
  EXPECT_NE(e.find("float[3,3]"), std::string::npos) << e;

  e = ErrorOf(s, feeds, {Value(Tensor(DataType::kFloat, {2, 3})), Value(Tensor(DataType::kFloat, {2, 3}))});
  EXPECT_NE(e.find("2 preallocated outputs for 1"), std::string::npos) << e;

  e = ErrorOf(s, feeds, {Value::Sequence({})});
  EXPECT_NE(e.find("'y'"), std::string::npos) << e;
}

TEST(IoBindingRun, ABufferOfAnotherShapeThanTheRunMadeIsAnError) {
  // y's first dim is symbolic, so only the Run knows it: a [5,3] buffer for a [2,3] result.
  const std::string bytes = ReluNegModel(-1);
  Session s(bytes.data(), bytes.size());
  std::vector<float> storage(15, 7.0f);
  const std::string e = ErrorOf(s, {{"x", Input()}},
                                {Value(Tensor::View(DataType::kFloat, {5, 3}, storage.data(), nullptr))});
  EXPECT_NE(e.find("'y' is float[2,3]"), std::string::npos) << e;
  EXPECT_NE(e.find("float[5,3]"), std::string::npos) << e;
  EXPECT_EQ(storage, std::vector<float>(15, 7.0f));  // the buffer was not written
}

TEST(IoBindingRun, ProvidersAreOnnxRuntimeNames) {
  const std::string bytes = ReluNegModel();
  Session s(bytes.data(), bytes.size());
  EXPECT_EQ(s.providers(), (std::vector<std::string>{"CPUExecutionProvider"}));
  const auto available = AvailableProviders();
  ASSERT_FALSE(available.empty());
  EXPECT_EQ(available.back(), "CPUExecutionProvider");
}

}  // namespace
}  // namespace onyx
