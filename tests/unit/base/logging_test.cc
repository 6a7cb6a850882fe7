// The logger's levels, and what sessions and Runs log at each (captured from stderr).
#include "base/logging.h"

#include <gtest/gtest.h>

#include <regex>

#include "model_builder.h"
#include "onyx/session.h"

namespace onyx {
namespace {

using testing::internal::CaptureStderr;
using testing::internal::GetCapturedStderr;

TEST(Logger, PrintsAtOrAboveItsSeverityWithTheLogId) {
  Logger logger("mylog", 1, 0);
  CaptureStderr();
  logger.Verbose(0, "hidden");
  logger.Info("shown ", 42);
  logger.Warning("also shown");
  const std::string out = GetCapturedStderr();
  EXPECT_EQ(out.find("hidden"), std::string::npos) << out;
  EXPECT_TRUE(std::regex_search(out, std::regex(R"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} \[I:onyx:mylog\] shown 42\n)")))
      << out;
  EXPECT_NE(out.find("[W:onyx:mylog] also shown"), std::string::npos) << out;
}

TEST(Logger, VerboseMessagesPrintUpToTheVerbosity) {
  Logger logger("v", 0, 1);
  CaptureStderr();
  logger.Verbose(1, "one");
  logger.Verbose(2, "two");
  const std::string out = GetCapturedStderr();
  EXPECT_NE(out.find("[V:onyx:v] one"), std::string::npos) << out;
  EXPECT_EQ(out.find("two"), std::string::npos) << out;
}

TEST(Logger, LevelsOutOfRangeAreErrors) {
  EXPECT_THROW(Logger("x", 5, 0, "SessionOptions"), Error);
  EXPECT_THROW(Logger("x", -1, 0), Error);
  try {
    Logger("x", 0, -2, "RunOptions");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("RunOptions: log_verbosity_level"), std::string::npos) << e.what();
  }
}

// y = relu(x) + x: Relu and Add nodes.
std::string Model() {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {2}).Output("y", DataType::kFloat, {2});
  b.Node("Relu", {"x"}, {"r"}).name = "the_relu";
  b.Node("Add", {"r", "x"}, {"y"}).name = "the_add";
  return b.Bytes();
}

std::string CreationLog(const SessionOptions& options) {
  const std::string bytes = Model();
  CaptureStderr();
  Session s(bytes.data(), bytes.size(), options);
  return GetCapturedStderr();
}

TEST(SessionLogging, TheSeverityLevelChoosesWhatSessionCreationPrints) {
  SessionOptions options;
  options.logid = "sess-1";
  EXPECT_EQ(CreationLog(options), "");  // default: warnings only, and there are none

  options.log_severity_level = 1;
  std::string out = CreationLog(options);
  EXPECT_NE(out.find("[I:onyx:sess-1] <model bytes>: session created: 2 nodes"), std::string::npos) << out;
  EXPECT_NE(out.find("passes that rewrote"), std::string::npos) << out;
  EXPECT_EQ(out.find("the_relu"), std::string::npos) << out;

  options.log_severity_level = 0;
  out = CreationLog(options);
  EXPECT_NE(out.find("[V:onyx:sess-1] <model bytes>: node 'the_relu' (Relu, opset 17) runs on CPU, kernel Relu opset"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("node 'the_add' (Add, opset 17) runs on CPU"), std::string::npos) << out;
}

TEST(SessionLogging, AnOptionThatCannotTakeEffectIsAWarning) {
  SessionOptions options;
  options.enable_cpu_mem_arena = false;
  std::string out = CreationLog(options);
  EXPECT_NE(out.find("[W:onyx:] <model bytes>: enable_mem_pattern has no effect without the CPU arena"),
            std::string::npos)
      << out;
  options.log_severity_level = 3;  // errors only
  EXPECT_EQ(CreationLog(options), "");
  options.log_severity_level = 2;
  options.enable_mem_pattern = false;
  EXPECT_EQ(CreationLog(options), "");
}

TEST(SessionLogging, BadLevelsAreErrorsNamingTheOption) {
  const std::string bytes = Model();
  SessionOptions options;
  options.log_severity_level = 7;
  try {
    Session s(bytes.data(), bytes.size(), options);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("SessionOptions: log_severity_level"), std::string::npos) << e.what();
  }
}

TEST(RunLogging, VerboseRunsNameEachNodeUpToTheVerbosity) {
  const std::string bytes = Model();
  Session s(bytes.data(), bytes.size());
  const NamedValues feeds = {{"x", Tensor::FromVector<float>(DataType::kFloat, {2}, {-1, 2})}};
  auto run_log = [&](const RunOptions& options) {
    CaptureStderr();
    auto out = s.Run(feeds, {}, options);
    EXPECT_EQ(out[0].tensor().data<float>()[1], 4.0f);  // relu(2) + 2
    return GetCapturedStderr();
  };
  RunOptions options;
  options.run_tag = "run-9";
  EXPECT_EQ(run_log(options), "");  // default: warnings only
  options.log_severity_level = 0;
  EXPECT_EQ(run_log(options), "");  // verbose, but node messages need verbosity 1
  options.log_verbosity_level = 1;
  const std::string out = run_log(options);
  EXPECT_NE(out.find("[V:onyx:run-9] running node 'the_relu' (Relu, opset 17) on CPU"), std::string::npos) << out;
  EXPECT_NE(out.find("running node 'the_add'"), std::string::npos) << out;
  EXPECT_LT(out.find("the_relu"), out.find("the_add")) << out;
}

TEST(RunLogging, ACopyIntoAPreallocatedOutputIsInfo) {
  // y is the input itself, so it cannot be made in the caller's buffer.
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {2}).Output("x", DataType::kFloat, {2});
  const std::string bytes = b.Bytes();
  Session s(bytes.data(), bytes.size());
  std::vector<float> buffer(2);
  RunOptions options;
  options.log_severity_level = 1;
  CaptureStderr();
  s.Run({{"x", Tensor::FromVector<float>(DataType::kFloat, {2}, {3, 4})}}, {},
        {Value(Tensor::View(DataType::kFloat, {2}, buffer.data(), nullptr))}, options);
  const std::string out = GetCapturedStderr();
  EXPECT_NE(out.find("[I:onyx:] <model bytes>: output 'x' is not made in its preallocated buffer"), std::string::npos)
      << out;
  EXPECT_EQ(buffer, (std::vector<float>{3, 4}));
}

}  // namespace
}  // namespace onyx
