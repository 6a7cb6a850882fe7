#include "optimizer/pass_test_util.h"

#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>

namespace onyx {
namespace {

using test::ExpectSameOutputs;
using test::FloatTensor;
using test::ModelBuilder;
using test::OpCount;
using test::RunPassAlone;

TEST(ConstantFolding, FoldsNodesWithConstantInputs) {
  ModelBuilder b;
  b.Input("x", DataType::kFloat, {2, 3}).Output("y", DataType::kFloat, {2, 3});
  b.Initializer("c1", FloatTensor({3}, 1.0f)).Initializer("c2", FloatTensor({3}, 2.0f));
  b.Node("Mul", {"c1", "c2"}, {"c"});
  b.Node("Add", {"x", "c"}, {"y"});
  const std::string bytes = b.Bytes();
  auto run = RunPassAlone(bytes, "ConstantFolding");
  EXPECT_EQ(OpCount(run.ops_after, "Mul"), 0);
  EXPECT_EQ(OpCount(run.ops_after, "Add"), 1);
  ExpectSameOutputs(bytes, run.optimized_bytes, {{"x", FloatTensor({2, 3}, -1.0f, 0.5f)}});
}

TEST(ConstantFolding, LeavesOverridableInitializersAlone) {
  // IR 3: the initializer is also a graph input, so a feed may replace it.
  ModelBuilder b(9, 3);
  b.Input("x", DataType::kFloat, {3}).Input("c1", DataType::kFloat, {3}).Output("y", DataType::kFloat, {3});
  b.Initializer("c1", FloatTensor({3}, 1.0f));
  b.Node("Mul", {"c1", "c1"}, {"c"});
  b.Node("Add", {"x", "c"}, {"y"});
  auto run = RunPassAlone(b.Bytes(), "ConstantFolding");
  EXPECT_EQ(OpCount(run.ops_after, "Mul"), 1);
}

TEST(ConstantFolding, DoesNotBloatTheModel) {
  // Expand of a 1-element constant to 4 MiB would grow the model: it stays a node.
  ModelBuilder b;
  b.Input("x", DataType::kFloat, {1024, 1024}).Output("y", DataType::kFloat, {1024, 1024});
  b.Initializer("one", FloatTensor({1}, 1.0f));
  b.Initializer("big", test::FloatTensor({1024, 1024}, 0.0f, 0.0f));
  b.Node("Add", {"big", "one"}, {"c"});  // output as large as an input: folding is fine
  b.Node("Add", {"x", "c"}, {"y"});
  auto run = RunPassAlone(b.Bytes(), "ConstantFolding");
  EXPECT_EQ(OpCount(run.ops_after, "Add"), 1);
}

TEST(ConstantFolding, RefusesAnOutputTooLargeToKeepBeforeAllocatingIt) {
  // A constant ConstantOfShape of 2 GiB: the fold would be dropped for its size anyway, so it must
  // not be computed (found by the session fuzzer: such models took seconds and gigabytes to load).
  ModelBuilder b;
  b.Input("x", DataType::kFloat, {1}).Output("y", DataType::kFloat, {32768, 16384});
  b.Initializer("shape", Tensor::FromVector<int64_t>(DataType::kInt64, {2}, {32768, 16384}));
  b.Node("ConstantOfShape", {"shape"}, {"big"});
  b.Node("Add", {"big", "x"}, {"y"});
  rusage before{}, after{};
  getrusage(RUSAGE_SELF, &before);
  auto run = RunPassAlone(b.Bytes(), "ConstantFolding");
  getrusage(RUSAGE_SELF, &after);
  EXPECT_EQ(OpCount(run.ops_after, "ConstantOfShape"), 1);
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 256 * 1024) << "KiB of peak resident memory added";
}

TEST(DeadCodeElimination, RemovesUnreadNodes) {
  ModelBuilder b;
  b.Input("x", DataType::kFloat, {3}).Output("y", DataType::kFloat, {3});
  b.Node("Add", {"x", "x"}, {"y"});
  b.Node("Mul", {"x", "x"}, {"unused1"});
  b.Node("Add", {"unused1", "x"}, {"unused2"});
  const std::string bytes = b.Bytes();
  auto run = RunPassAlone(bytes, "DeadCodeElimination");
  EXPECT_EQ(OpCount(run.ops_after, "Mul"), 0);
  EXPECT_EQ(OpCount(run.ops_after, "Add"), 1);
  ExpectSameOutputs(bytes, run.optimized_bytes, {{"x", FloatTensor({3})}});
}

TEST(IdentityElimination, RemovesIdentityChainsKeepingOutputNames) {
  ModelBuilder b;
  b.Input("x", DataType::kFloat, {3}).Output("y", DataType::kFloat, {3}).Output("z", DataType::kFloat, {3});
  b.Node("Add", {"x", "x"}, {"a"});
  b.Node("Identity", {"a"}, {"b"});
  b.Node("Identity", {"b"}, {"y"});
  b.Node("Mul", {"b", "x"}, {"z"});
  const std::string bytes = b.Bytes();
  auto run = RunPassAlone(bytes, "IdentityElimination");
  EXPECT_EQ(OpCount(run.ops_after, "Identity"), 0);
  ExpectSameOutputs(bytes, run.optimized_bytes, {{"x", FloatTensor({3}, 1.0f)}});
}

TEST(IdentityElimination, KeepsAnIdentityFromAGraphInputToAnOutput) {
  ModelBuilder b;
  b.Input("x", DataType::kFloat, {3}).Output("y", DataType::kFloat, {3});
  b.Node("Identity", {"x"}, {"y"});
  auto run = RunPassAlone(b.Bytes(), "IdentityElimination");
  EXPECT_EQ(OpCount(run.ops_after, "Identity"), 1);
}

TEST(PassManager, RejectsUnknownPassNames) {
  ModelBuilder b;
  b.Input("x", DataType::kFloat, {3}).Output("x", DataType::kFloat, {3});
  const std::string bytes = b.Bytes();
  EXPECT_THROW(RunPassAlone(bytes, "NoSuchPass"), Error);
  SessionOptions options;
  options.config_entries["optimization.disable_specified_optimizers"] = "ConstantFolding, NoSuchPass";
  EXPECT_THROW(Session(bytes.data(), bytes.size(), options), Error);
  options.config_entries["optimization.disable_specified_optimizers"] = "ConstantFolding";
  EXPECT_NO_THROW(Session(bytes.data(), bytes.size(), options));
  options.config_entries["no.such.key"] = "1";
  EXPECT_THROW(Session(bytes.data(), bytes.size(), options), Error);
}

TEST(PassManager, LevelsAndDisablingChangeWhatRuns) {
  ModelBuilder b;
  b.Input("x", DataType::kFloat, {3}).Output("y", DataType::kFloat, {3});
  b.Initializer("c1", FloatTensor({3}, 1.0f));
  b.Node("Mul", {"c1", "c1"}, {"c"});
  b.Node("Add", {"x", "c"}, {"y"});
  const std::string bytes = b.Bytes();
  auto fused_muls = [&](SessionOptions options) {
    Session s(bytes.data(), bytes.size(), options);
    return test::OpCount(s.impl().optimization_report().op_counts_after, "Mul");
  };
  SessionOptions options;
  EXPECT_EQ(fused_muls(options), 0);
  options.graph_optimization_level = GraphOptimizationLevel::kDisabled;
  EXPECT_EQ(fused_muls(options), 1);
  options.graph_optimization_level = GraphOptimizationLevel::kAll;
  options.config_entries["optimization.disable_specified_optimizers"] = "ConstantFolding";
  EXPECT_EQ(fused_muls(options), 1);
}

}  // namespace
}  // namespace onyx

namespace onyx {
namespace {

TEST(OptimizedModelFilepath, SavesALoadableModelInlineOrWithExternalData) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("onyx_saved_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {64, 64}).Output("y", DataType::kFloat, {64, 64});
  b.Initializer("c1", test::FloatTensor({64, 64}, 1.0f, 0.01f));
  b.Node("Mul", {"c1", "c1"}, {"c"});
  b.Node("Add", {"x", "c"}, {"y"});
  const std::string bytes = b.Bytes();
  const NamedValues feeds = {{"x", test::FloatTensor({64, 64}, -3.0f, 0.1f)}};
  SessionOptions options;
  options.optimized_model_filepath = (dir / "inline.onnx").string();
  Session original(bytes.data(), bytes.size(), options);
  ASSERT_TRUE(fs::exists(dir / "inline.onnx"));
  Session reloaded((dir / "inline.onnx").string());
  EXPECT_EQ(testing::CompareValues(original.Run(feeds)[0], reloaded.Run(feeds)[0]), "");
  EXPECT_EQ(test::OpCount(CountOps(*LoadModelFromFile((dir / "inline.onnx").string())->graph), "Mul"), 0);

  options.optimized_model_filepath = (dir / "ext.onnx").string();
  options.config_entries["session.optimized_model_external_initializers_file_name"] = "ext_weights.bin";
  options.config_entries["session.optimized_model_external_initializers_min_size_in_bytes"] = "100";
  Session with_external(bytes.data(), bytes.size(), options);
  ASSERT_TRUE(fs::exists(dir / "ext_weights.bin"));
  EXPECT_GE(fs::file_size(dir / "ext_weights.bin"), 64u * 64u * 4u);
  EXPECT_LT(fs::file_size(dir / "ext.onnx"), 4096u);
  Session reloaded_ext((dir / "ext.onnx").string());
  EXPECT_EQ(testing::CompareValues(original.Run(feeds)[0], reloaded_ext.Run(feeds)[0]), "");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace onyx

namespace onyx {
namespace {

// Two graph outputs that end up holding the same value keep their names through an Identity
// the editor adds; that node must carry the model's opset (or no kernel would match it).
TEST(GraphEditor, IdentityItAddsCarriesTheModelOpset) {
  test::ModelBuilder b(13);
  b.Input("x", DataType::kFloat, {2}).Output("a", DataType::kFloat, {2}).Output("y", DataType::kFloat, {2});
  b.Node("Add", {"x", "x"}, {"a"});
  b.Node("Identity", {"a"}, {"y"});
  const std::string bytes = b.Bytes();
  auto model = LoadModelFromBytes(bytes.data(), bytes.size());
  GraphEditor editor(*model->graph, model->opset_imports);
  ir::Node* identity = editor.NodesOfType("Identity")[0];
  editor.RemoveNode(identity);
  editor.ReplaceAllUses("y", "a");
  editor.Finish();
  ASSERT_EQ(editor.NodesOfType("Identity").size(), 1u);
  EXPECT_EQ(editor.NodesOfType("Identity")[0]->opset, 13);
  const std::string optimized = SerializeModel(*model);
  test::ExpectSameOutputs(bytes, optimized, {{"x", test::FloatTensor({2}, 1.0f)}});
}

// Finish(false), as after a pass that reports no rewrite, still drops initializers nothing
// reads; and a change made through the editor is finished even so (the node really goes).
TEST(GraphEditor, FinishWithoutRewritesKeepsTheGraphAndHonoursEditorChanges) {
  test::ModelBuilder b(13);
  b.Input("x", DataType::kFloat, {2}).Output("y", DataType::kFloat, {2});
  b.Initializer("unused", test::FloatTensor({2}, 1.0f));
  b.Node("Neg", {"x"}, {"n"});
  b.Node("Abs", {"x"}, {"y"});
  const std::string bytes = b.Bytes();
  auto model = LoadModelFromBytes(bytes.data(), bytes.size());
  {
    GraphEditor editor(*model->graph, model->opset_imports);
    editor.Finish(false);  // never indexed: nothing to tell what is read
  }
  EXPECT_TRUE(model->graph->IsInitializer("unused"));
  EXPECT_EQ(model->graph->nodes.size(), 2u);
  GraphEditor(*model->graph, model->opset_imports).RemoveUnreadInitializers();
  EXPECT_FALSE(model->graph->IsInitializer("unused"));
  {
    GraphEditor editor(*model->graph, model->opset_imports);
    editor.RemoveNode(editor.NodesOfType("Neg")[0]);
    editor.Finish(false);
  }
  ASSERT_EQ(model->graph->nodes.size(), 1u);
  EXPECT_EQ(model->graph->nodes[0]->op_type, "Abs");
}

TEST(GraphEditor, TheOptimizerDropsUnreadInitializersEvenWhenNoPassRewrites) {
  test::ModelBuilder b(13);
  b.Input("x", DataType::kFloat, {2}).Output("y", DataType::kFloat, {2});
  b.Initializer("unused", test::FloatTensor({2}, 1.0f));
  b.Node("Abs", {"x"}, {"y"});
  const std::string bytes = b.Bytes();
  auto model = LoadModelFromBytes(bytes.data(), bytes.size());
  OptimizerOptions options;
  options.level = OptLevel::kBasic;
  const OptimizationReport report = OptimizeModel(*model, options);
  for (const auto& pass : report.passes) EXPECT_EQ(pass.rewrites, 0) << pass.name;
  EXPECT_FALSE(model->graph->IsInitializer("unused"));
  EXPECT_EQ(model->graph->nodes.size(), 1u);
}

}  // namespace
}  // namespace onyx
