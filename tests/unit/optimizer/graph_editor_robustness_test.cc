// GraphEditor on graphs the loader accepts but passes did not expect: very long chains (the
// dependency walk must not recurse per node), nodes added out of order, and every optimization
// level over models the mutation campaign (tests/fuzz/mutate_models.py) found crashing.
#include <gtest/gtest.h>

#include "model_builder.h"
#include "onnx/model_loader.h"
#include "onyx/session.h"
#include "optimizer/graph_editor.h"

namespace onyx {
namespace {

TEST(GraphEditorRobustness, TypesALongChainWithoutDeepRecursion) {
  // 100,000 nodes appended in reverse order: ordering them by dependencies walks the whole
  // chain from its last node (a recursive walk overflows an 8 MiB stack here).
  constexpr int kNodes = 100000;
  ir::Graph graph;
  graph.inputs.push_back({"v0", test::ModelBuilder::Type(DataType::kFloat, {2, 3}), ""});
  for (int i = kNodes; i >= 1; --i) {
    auto node = std::make_unique<ir::Node>();
    node->op_type = "Relu";
    node->opset = 17;
    node->name = "relu" + std::to_string(i);
    node->inputs = {"v" + std::to_string(i - 1)};
    node->outputs = {"v" + std::to_string(i)};
    graph.AddNode(std::move(node));
  }
  GraphEditor editor(graph, {{"", 17}});
  const auto* dims = editor.DimsOf("v" + std::to_string(kNodes));
  ASSERT_NE(dims, nullptr);
  EXPECT_EQ(dims->size(), 2u);
  EXPECT_EQ((*dims)[1].value, 3);
}

// Found by the campaign: a Constant turned into a Shape with no input (rejected by the loader
// now: Shape takes 1 input), and a Concat of inputs of different ranks (shape inference left
// it unknown, NoOpElimination then read it).
TEST(GraphEditorRobustness, SessionsRejectOrRunMutatedGraphsAtEveryLevel) {
  test::ModelBuilder shape_without_input;
  shape_without_input.Input("x", DataType::kFloat, {2, 3}).Output("y", DataType::kFloat, {});
  shape_without_input.Node("Shape", {}, {"s"});
  shape_without_input.Node("Reshape", {"x", "s"}, {"y"});

  test::ModelBuilder concat_ranks;
  concat_ranks.Input("a", DataType::kFloat, {2, 3}).Input("b", DataType::kFloat, {3});
  concat_ranks.Output("y", DataType::kFloat, {});
  concat_ranks.Node("Concat", {"a", "b"}, {"c"}).attributes.push_back(test::IntAttr("axis", 1));
  concat_ranks.Node("Reshape", {"c", "c"}, {"y"});

  // Found by the session fuzzer: a Slice with one axis for two starts and ends; NoOpElimination
  // read past the axes (AddressSanitizer: heap-buffer-overflow, SEGV in the fuzz build).
  test::ModelBuilder slice_short_axes;
  slice_short_axes.Input("x", DataType::kFloat, {2, 3}).Output("y", DataType::kFloat, {});
  slice_short_axes.Initializer("starts", Tensor::FromVector<int64_t>(DataType::kInt64, {2}, {0, 0}));
  slice_short_axes.Initializer("ends", Tensor::FromVector<int64_t>(DataType::kInt64, {2}, {9, 9}));
  slice_short_axes.Initializer("axes", Tensor::FromVector<int64_t>(DataType::kInt64, {1}, {0}));
  slice_short_axes.Node("Slice", {"x", "starts", "ends", "axes"}, {"y"});

  for (auto* b : {&shape_without_input, &concat_ranks, &slice_short_axes}) {
    const std::string bytes = b->Bytes();
    for (auto level : {GraphOptimizationLevel::kDisabled, GraphOptimizationLevel::kBasic,
                       GraphOptimizationLevel::kExtended, GraphOptimizationLevel::kAll}) {
      SessionOptions options;
      options.graph_optimization_level = level;
      try {
        Session session(bytes.data(), bytes.size(), options);
      } catch (const Error& e) {
        EXPECT_TRUE(e.code() == ErrorCode::kInvalidModel || e.code() == ErrorCode::kNotImplemented ||
                    e.code() == ErrorCode::kRuntime)
            << e.what();
      }
    }
  }
}

}  // namespace
}  // namespace onyx
