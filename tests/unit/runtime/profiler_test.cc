// Session profiling: the file EndProfiling writes is ONNX Runtime's Chrome-trace JSON, with one
// "Node" event per kernel run (subgraphs and parallel lanes too) and the "Session" events, each
// checked against what the test model does (hand-computed shapes and byte counts).
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <thread>

#include "branchy_model.h"
#include "model_builder.h"
#include "onyx/session.h"
#include "platform/thread_pool.h"
#include "runtime/session_impl.h"

namespace onyx {
namespace {

using test::BranchyModel;

namespace fs = std::filesystem;
using nlohmann::json;

// y = (x + w) * x, with x [batch, 4] and a constant w [4].
std::string SmallModel() {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {-1, 4}).Output("y", DataType::kFloat, {-1, 4});
  b.Initializer("w", test::FloatTensor({4}, 0.5f));
  b.Node("Add", {"x", "w"}, {"s"});  // named Add_0
  b.Node("Mul", {"s", "x"}, {"y"});  // named Mul_1
  return b.Bytes();
}

// A folder of its own per test, so file names and counts are this test's alone.
class Profiling : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("onyx_profiler_test_" + std::to_string(getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  SessionOptions Options(const std::string& stem = "trace") const {
    SessionOptions o;
    o.enable_profiling = true;
    o.profile_file_prefix = (dir_ / stem).string();
    o.graph_optimization_level = GraphOptimizationLevel::kDisabled;  // keeps the model's node names
    o.intra_op_num_threads = 1;
    return o;
  }
  size_t FilesInDir() const { return static_cast<size_t>(std::distance(fs::directory_iterator(dir_), {})); }

  fs::path dir_;
};

json ReadProfile(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  return json::parse(in);
}

std::vector<json> EventsNamed(const json& events, const std::string& name) {
  std::vector<json> out;
  for (const auto& e : events)
    if (e["name"] == name) out.push_back(e);
  return out;
}

std::vector<json> NodeEvents(const json& events) {
  std::vector<json> out;
  for (const auto& e : events)
    if (e["cat"] == "Node") out.push_back(e);
  return out;
}

json TypeShape(const std::string& dtype, const std::vector<int64_t>& shape) { return json{{dtype, shape}}; }

int ThisThreadId() { return static_cast<int>(syscall(SYS_gettid)); }

TEST_F(Profiling, WritesOrtTraceEventsForEveryKernelRun) {
  const std::string bytes = SmallModel();
  Session s(bytes.data(), bytes.size(), Options());
  const int64_t now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  EXPECT_GT(s.profiling_start_time_ns(), now_ns - int64_t{60'000'000'000});
  EXPECT_LE(s.profiling_start_time_ns(), now_ns);
  const Tensor x = test::FloatTensor({2, 4});
  constexpr int kRuns = 3;
  for (int r = 0; r < kRuns; ++r) s.Run({{"x", x}});
  const std::string path = s.EndProfiling();

  // "<prefix>_YYYY-MM-DD_HH-MM-SS_mmm.json", beside the prefix.
  const std::string prefix = (dir_ / "trace").string();
  ASSERT_EQ(path.rfind(prefix + "_", 0), 0u) << path;
  EXPECT_TRUE(std::regex_match(path.substr(prefix.size()), std::regex(R"(_\d{4}-\d{2}-\d{2}_\d{2}-\d{2}-\d{2}_\d{3}\.json)")))
      << path;
  ASSERT_TRUE(fs::exists(path));

  const json events = ReadProfile(path);
  ASSERT_TRUE(events.is_array());
  for (const auto& e : events) {
    for (const char* key : {"cat", "pid", "tid", "dur", "ts", "ph", "name", "args"})
      ASSERT_TRUE(e.contains(key)) << key << " missing in " << e.dump();
    EXPECT_EQ(e["ph"], "X");
    EXPECT_EQ(e["pid"], static_cast<int>(getpid()));
    EXPECT_GE(e["ts"].get<int64_t>(), 0);
    EXPECT_GE(e["dur"].get<int64_t>(), 0);
  }
  EXPECT_EQ(EventsNamed(events, "model_loading_array").size(), 1u);
  EXPECT_EQ(EventsNamed(events, "session_initialization").size(), 1u);
  const auto runs = EventsNamed(events, "model_run");
  ASSERT_EQ(runs.size(), static_cast<size_t>(kRuns));
  EXPECT_EQ(EventsNamed(events, "SequentialExecutor::Execute").size(), static_cast<size_t>(kRuns));
  for (const char* name : {"model_loading_array", "session_initialization", "model_run"})
    EXPECT_EQ(EventsNamed(events, name)[0]["cat"], "Session") << name;
  // Loading, then initialization, then the runs.
  const auto load = EventsNamed(events, "model_loading_array")[0];
  const auto init = EventsNamed(events, "session_initialization")[0];
  EXPECT_LE(load["ts"].get<int64_t>() + load["dur"].get<int64_t>(), init["ts"].get<int64_t>());
  EXPECT_LE(init["ts"].get<int64_t>() + init["dur"].get<int64_t>(), runs[0]["ts"].get<int64_t>());

  const auto nodes = NodeEvents(events);
  ASSERT_EQ(nodes.size(), 2u * kRuns);  // one per kernel per Run
  const auto adds = EventsNamed(events, "Add_0_kernel_time");
  const auto muls = EventsNamed(events, "Mul_1_kernel_time");
  ASSERT_EQ(adds.size(), static_cast<size_t>(kRuns));
  ASSERT_EQ(muls.size(), static_cast<size_t>(kRuns));
  const json& add = adds[0]["args"];
  EXPECT_EQ(add["op_name"], "Add");
  EXPECT_EQ(add["provider"], "CPUExecutionProvider");
  EXPECT_EQ(add["node_index"], "0");
  EXPECT_EQ(add["input_type_shape"], json::array({TypeShape("float", {2, 4}), TypeShape("float", {4})}));
  EXPECT_EQ(add["output_type_shape"], json::array({TypeShape("float", {2, 4})}));
  EXPECT_EQ(add["activation_size"], "32");  // x: 8 floats
  EXPECT_EQ(add["parameter_size"], "16");   // w: 4 floats
  EXPECT_EQ(add["output_size"], "32");
  const json& mul = muls[0]["args"];
  EXPECT_EQ(mul["op_name"], "Mul");
  EXPECT_EQ(mul["node_index"], "1");
  EXPECT_EQ(mul["input_type_shape"], json::array({TypeShape("float", {2, 4}), TypeShape("float", {2, 4})}));
  EXPECT_EQ(mul["activation_size"], "64");
  EXPECT_EQ(mul["parameter_size"], "0");

  // Sequential mode: every kernel runs on the thread that called Run, named in the stats.
  for (const auto& e : nodes) {
    EXPECT_EQ(e["tid"], ThisThreadId());
    const json& stats = e["args"]["thread_scheduling_stats"];
    EXPECT_EQ(stats["main_thread"]["thread_id"], std::to_string(ThisThreadId()));
    EXPECT_EQ(stats["main_thread"]["num_threads"], 1);
  }
  // Each Run's nodes lie inside its model_run, in order: ts never goes back on one thread.
  int64_t last_ts = -1;
  for (int r = 0; r < kRuns; ++r) {
    const int64_t begin = runs[r]["ts"], end = begin + runs[r]["dur"].get<int64_t>();
    for (const auto& e : {adds[r], muls[r]}) {
      EXPECT_GE(e["ts"].get<int64_t>(), begin);
      EXPECT_LE(e["ts"].get<int64_t>() + e["dur"].get<int64_t>(), end);
    }
  }
  for (const auto& e : nodes) {
    EXPECT_GE(e["ts"].get<int64_t>(), last_ts);
    last_ts = e["ts"];
  }
}

TEST_F(Profiling, OffWritesNothingAndReportsNoStart) {
  const std::string bytes = SmallModel();
  SessionOptions o = Options();
  o.enable_profiling = false;
  {
    Session s(bytes.data(), bytes.size(), o);
    s.Run({{"x", test::FloatTensor({2, 4})}});
    EXPECT_EQ(s.EndProfiling(), "");
    EXPECT_EQ(s.profiling_start_time_ns(), 0);
  }
  EXPECT_EQ(FilesInDir(), 0u);
}

TEST_F(Profiling, SecondEndProfilingNeitherRewritesNorRecords) {
  const std::string bytes = SmallModel();
  Session s(bytes.data(), bytes.size(), Options());
  s.Run({{"x", test::FloatTensor({2, 4})}});
  const std::string path = s.EndProfiling();
  ASSERT_FALSE(path.empty());
  const json first = ReadProfile(path);
  s.Run({{"x", test::FloatTensor({2, 4})}});  // after the end: not recorded
  EXPECT_EQ(s.EndProfiling(), "");
  EXPECT_EQ(ReadProfile(path), first);
  EXPECT_EQ(NodeEvents(first).size(), 2u);
  EXPECT_EQ(FilesInDir(), 1u);
}

TEST_F(Profiling, DestroyingAProfilingSessionWritesTheFile) {
  const std::string bytes = SmallModel();
  {
    Session s(bytes.data(), bytes.size(), Options());
    s.Run({{"x", test::FloatTensor({1, 4})}});
  }
  ASSERT_EQ(FilesInDir(), 1u);
  const json events = ReadProfile(fs::directory_iterator(dir_)->path().string());
  EXPECT_EQ(NodeEvents(events).size(), 2u);
}

// Unnamed nodes get "<op>_<n>" when the model is loaded; the profile uses that name.
TEST_F(Profiling, UnnamedNodesAreNamedByTheirOp) {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {2}).Output("y", DataType::kFloat, {2});
  b.Node("Relu", {"x"}, {"r"});
  b.Node("Neg", {"r"}, {"y"}).name.clear();
  const std::string bytes = b.Bytes();
  Session s(bytes.data(), bytes.size(), Options());
  s.Run({{"x", test::FloatTensor({2})}});
  const auto nodes = NodeEvents(ReadProfile(s.EndProfiling()));
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0]["name"], "Relu_0_kernel_time");
  EXPECT_TRUE(std::regex_match(nodes[1]["name"].get<std::string>(), std::regex(R"(Neg_\d+_kernel_time)")))
      << nodes[1]["name"];
}

TEST_F(Profiling, AFileThatCannotBeWrittenIsAnErrorNamingIt) {
  const std::string bytes = SmallModel();
  SessionOptions o = Options();
  o.profile_file_prefix = (dir_ / "no_such_folder" / "trace").string();
  Session s(bytes.data(), bytes.size(), o);
  s.Run({{"x", test::FloatTensor({1, 4})}});
  try {
    s.EndProfiling();
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(o.profile_file_prefix + "_"), std::string::npos) << e.what();
  }
}

TEST_F(Profiling, PrePackedWeightsKeepTheirShapesAndSizes) {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {1, 3, 6, 6}).Output("y", DataType::kFloat, {1, 4, 4, 4});
  b.Initializer("W", test::FloatTensor({4, 3, 3, 3}, -1.0f, 0.01f));
  b.Initializer("B", test::FloatTensor({4}));
  b.Node("Conv", {"x", "W", "B"}, {"y"});
  const std::string bytes = b.Bytes();
  Session s(bytes.data(), bytes.size(), Options());
  s.Run({{"x", test::FloatTensor({1, 3, 6, 6})}});
  const auto convs = EventsNamed(ReadProfile(s.EndProfiling()), "Conv_0_kernel_time");
  ASSERT_EQ(convs.size(), 1u);
  const json& args = convs[0]["args"];
  EXPECT_EQ(args["input_type_shape"], json::array({TypeShape("float", {1, 3, 6, 6}), TypeShape("float", {4, 3, 3, 3}),
                                                   TypeShape("float", {4})}));
  EXPECT_EQ(args["output_type_shape"], json::array({TypeShape("float", {1, 4, 4, 4})}));
  EXPECT_EQ(args["activation_size"], "432");  // 108 floats
  EXPECT_EQ(args["parameter_size"], "448");   // 108 + 4 floats
  EXPECT_EQ(args["output_size"], "256");
}

// out = If(cond) then Neg(x) else Abs(x): the branch's node is recorded inside the If's.
TEST_F(Profiling, RecordsNodesInsideSubgraphs) {
  test::ModelBuilder b;
  b.Input("cond", DataType::kBool, {}).Input("x", DataType::kFloat, {3}).Output("out", DataType::kFloat, {3});
  auto branch = [](const std::string& attr, const std::string& op) {
    auto g = std::make_shared<ir::Graph>();
    g->name = op + "_branch";
    auto node = std::make_unique<ir::Node>();
    node->op_type = op;
    node->name = op + "_in_branch";
    node->inputs = {"x"};
    node->outputs = {op + "_out"};
    g->AddNode(std::move(node));
    g->outputs.push_back({op + "_out", test::ModelBuilder::Type(DataType::kFloat, {3}), ""});
    ir::Attribute a{attr, ir::AttrType::kGraph};
    a.g = g;
    return a;
  };
  b.Node("If", {"cond"}, {"out"}).attributes = {branch("then_branch", "Neg"), branch("else_branch", "Abs")};
  const std::string bytes = b.Bytes();
  Session s(bytes.data(), bytes.size(), Options());
  s.Run({{"cond", Tensor::Scalar<bool>(DataType::kBool, true)}, {"x", test::FloatTensor({3})}});
  s.Run({{"cond", Tensor::Scalar<bool>(DataType::kBool, false)}, {"x", test::FloatTensor({3})}});
  const json events = ReadProfile(s.EndProfiling());
  const auto ifs = EventsNamed(events, "If_0_kernel_time");
  const auto negs = EventsNamed(events, "Neg_in_branch_kernel_time");
  const auto abss = EventsNamed(events, "Abs_in_branch_kernel_time");
  ASSERT_EQ(ifs.size(), 2u);
  ASSERT_EQ(negs.size(), 1u);
  ASSERT_EQ(abss.size(), 1u);
  EXPECT_EQ(NodeEvents(events).size(), 4u);
  EXPECT_EQ(negs[0]["args"]["op_name"], "Neg");
  EXPECT_EQ(negs[0]["args"]["node_index"], "0");  // its index in the branch
  EXPECT_EQ(negs[0]["args"]["input_type_shape"], json::array({TypeShape("float", {3})}));
  EXPECT_EQ(ifs[0]["args"]["input_type_shape"], json::array({TypeShape("bool", {})}));
  for (const auto& [inner, outer] : {std::pair{negs[0], ifs[0]}, std::pair{abss[0], ifs[1]}}) {
    EXPECT_GE(inner["ts"].get<int64_t>(), outer["ts"].get<int64_t>());
    EXPECT_LE(inner["ts"].get<int64_t>() + inner["dur"].get<int64_t>(),
              outer["ts"].get<int64_t>() + outer["dur"].get<int64_t>());
  }
}

TEST_F(Profiling, ParallelModeRecordsEveryNodeOnTheThreadThatRanIt) {
  const std::string bytes = BranchyModel();
  SessionOptions o = Options();
  o.execution_mode = ExecutionMode::kParallel;
  o.inter_op_num_threads = 3;
  Session s(bytes.data(), bytes.size(), o);
  ASSERT_NE(s.impl().inter_op_thread_pool(), nullptr);
  std::set<int> lane_threads = {ThisThreadId()};
  for (int id : s.impl().inter_op_thread_pool()->WorkerThreadIds()) lane_threads.insert(id);
  constexpr int kRuns = 20;
  for (int r = 0; r < kRuns; ++r) s.Run({{"x", test::FloatTensor({4, 3}, -5.0f)}});
  const json events = ReadProfile(s.EndProfiling());
  EXPECT_EQ(EventsNamed(events, "ParallelExecutor::Execute").size(), static_cast<size_t>(kRuns));
  EXPECT_EQ(NodeEvents(events).size(), 5u * kRuns);
  for (const char* name : {"Relu_0", "Neg_1", "Add_2", "Mul_3", "Sub_4"})
    EXPECT_EQ(EventsNamed(events, std::string(name) + "_kernel_time").size(), static_cast<size_t>(kRuns)) << name;
  std::map<int, int64_t> last_ts;
  for (const auto& e : NodeEvents(events)) {
    const int tid = e["tid"];
    EXPECT_TRUE(lane_threads.count(tid)) << "node ran on thread " << tid << ", not a lane of the Run";
    EXPECT_EQ(e["args"]["thread_scheduling_stats"]["main_thread"]["thread_id"], std::to_string(tid));
    // One lane runs one node at a time: its events start in the order they were recorded.
    if (last_ts.count(tid)) EXPECT_GE(e["ts"].get<int64_t>(), last_ts[tid]);
    last_ts[tid] = e["ts"];
  }
}

TEST_F(Profiling, ConcurrentRunsAreAllRecorded) {
  const std::string bytes = SmallModel();
  Session s(bytes.data(), bytes.size(), Options());
  constexpr int kThreads = 4, kRuns = 25;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&s] {
      for (int r = 0; r < kRuns; ++r) s.Run({{"x", test::FloatTensor({3, 4})}});
    });
  for (auto& t : threads) t.join();
  const json events = ReadProfile(s.EndProfiling());
  EXPECT_EQ(EventsNamed(events, "model_run").size(), static_cast<size_t>(kThreads * kRuns));
  EXPECT_EQ(NodeEvents(events).size(), 2u * kThreads * kRuns);
  std::set<int> tids;
  for (const auto& e : NodeEvents(events)) tids.insert(e["tid"].get<int>());
  EXPECT_EQ(tids.size(), static_cast<size_t>(kThreads));
}

}  // namespace
}  // namespace onyx
