// RunOptions: terminate (before the Run, and from another thread inside a Loop body) and the
// run tag in errors.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "model_builder.h"
#include "onyx/session.h"

namespace onyx {
namespace {

// v = x + 1, repeated `trips` times by a Loop whose body reads nothing but its own inputs.
std::string LoopModel(int64_t trips) {
  auto body = std::make_shared<ir::Graph>();
  body->name = "body";
  body->inputs = {{"i", test::ModelBuilder::Type(DataType::kInt64, {}), ""},
                  {"c_in", test::ModelBuilder::Type(DataType::kBool, {}), ""},
                  {"v_in", test::ModelBuilder::Type(DataType::kFloat, {256}), ""}};
  body->outputs = {{"c_out", test::ModelBuilder::Type(DataType::kBool, {}), ""},
                   {"v_out", test::ModelBuilder::Type(DataType::kFloat, {256}), ""}};
  body->initializers["one"] = test::FloatTensor({256}, 1.0f, 0.0f);
  auto add = std::make_unique<ir::Node>();
  add->op_type = "Add";
  add->name = "body_add";
  add->inputs = {"v_in", "one"};
  add->outputs = {"v_out"};
  body->AddNode(std::move(add));
  auto id = std::make_unique<ir::Node>();
  id->op_type = "Identity";
  id->name = "body_cond";
  id->inputs = {"c_in"};
  id->outputs = {"c_out"};
  body->AddNode(std::move(id));

  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {256}).Output("v", DataType::kFloat, {256});
  b.Initializer("trips", Tensor::FromVector<int64_t>(DataType::kInt64, {}, {trips}));
  b.Initializer("go", Tensor::FromVector<bool>(DataType::kBool, {}, {true}));
  ir::Attribute attr{"body", ir::AttrType::kGraph};
  attr.g = body;
  b.Node("Loop", {"trips", "go", "x"}, {"v"}).attributes.push_back(attr);
  return b.Bytes();
}

TEST(RunOptions, TheLoopModelCountsItsTrips) {
  const std::string bytes = LoopModel(10);
  Session s(bytes.data(), bytes.size());
  auto out = s.Run({{"x", test::FloatTensor({256})}});
  EXPECT_EQ(out[0].tensor().data<float>()[3], 13.0f);  // 3 + 10 trips of +1
}

TEST(RunOptions, TerminateSetBeforeTheRunStopsIt) {
  const std::string bytes = LoopModel(10);
  Session s(bytes.data(), bytes.size());
  RunOptions options;
  options.run_tag = "batch-7";
  options.terminate->store(true);
  try {
    s.Run({{"x", test::FloatTensor({256})}}, {}, options);
    FAIL() << "expected the run to stop";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.code(), ErrorCode::kFail);
    EXPECT_NE(what.find("terminated"), std::string::npos) << what;
    EXPECT_NE(what.find("'batch-7'"), std::string::npos) << what;
  }
  // The flag belongs to those options: a Run with fresh ones goes through.
  EXPECT_EQ(s.Run({{"x", test::FloatTensor({256})}})[0].tensor().data<float>()[0], 10.0f);
}

TEST(RunOptions, TerminateFromAnotherThreadStopsALoopMidway) {
  // Millions of trips: seconds to finish; the flag set after 50 ms stops it inside the body.
  const std::string bytes = LoopModel(5'000'000);
  Session s(bytes.data(), bytes.size());
  RunOptions options;
  options.run_tag = "long";
  std::thread stopper([flag = options.terminate] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    flag->store(true);
  });
  const auto start = std::chrono::steady_clock::now();
  try {
    s.Run({{"x", test::FloatTensor({256})}}, {}, options);
    ADD_FAILURE() << "expected the run to stop";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.code(), ErrorCode::kFail);
    EXPECT_NE(what.find("terminated"), std::string::npos) << what;
    EXPECT_NE(what.find("body_"), std::string::npos) << what;  // stopped inside the body
    EXPECT_NE(what.find("'long'"), std::string::npos) << what;
  }
  stopper.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(RunOptions, TerminateStopsParallelModeToo) {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {4}).Output("a", DataType::kFloat, {4}).Output("n", DataType::kFloat, {4});
  b.Node("Relu", {"x"}, {"a"});
  b.Node("Neg", {"x"}, {"n"});
  const std::string bytes = b.Bytes();
  SessionOptions parallel;
  parallel.execution_mode = ExecutionMode::kParallel;
  parallel.inter_op_num_threads = 2;
  Session s(bytes.data(), bytes.size(), parallel);
  RunOptions options;
  options.terminate->store(true);
  try {
    s.Run({{"x", test::FloatTensor({4})}}, {}, options);
    FAIL() << "expected the run to stop";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kFail);
    EXPECT_NE(std::string(e.what()).find("terminated"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace onyx
