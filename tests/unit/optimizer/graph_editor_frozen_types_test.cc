// GraphEditor::FreezeTypes: inside the scope edits leave the types inferred before them (a
// fusion pass's rewrites keep its values' types, and inferring the whole graph after each one
// made a 96-layer BERT's optimization quadratic); after it, TypeOf sees the edited graph.
#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <string>

#include "model_builder.h"
#include "optimizer/graph_editor.h"

namespace onyx {
namespace {

// x [2, 3] -> Relu -> a -> Transpose -> b, and an input y [5, 7] for the tests to rewire the
// Transpose to (b then becomes [7, 5]).
std::unique_ptr<ir::Graph> ReluTranspose() {
  auto graph = std::make_unique<ir::Graph>();
  graph->inputs.push_back({"x", test::ModelBuilder::Type(DataType::kFloat, {2, 3}), ""});
  graph->inputs.push_back({"y", test::ModelBuilder::Type(DataType::kFloat, {5, 7}), ""});
  for (const auto& [op, in, out] : {std::array<const char*, 3>{"Relu", "x", "a"}, {"Transpose", "a", "b"}}) {
    auto node = std::make_unique<ir::Node>();
    node->op_type = op;
    node->opset = 17;
    node->inputs = {in};
    node->outputs = {out};
    graph->AddNode(std::move(node));
  }
  return graph;
}

TEST(GraphEditorFrozenTypes, EditsInsideTheScopeKeepTheTypesAndTheScopeEndRefreshesThem) {
  auto graph = ReluTranspose();
  GraphEditor editor(*graph, {{"", 17}});
  ASSERT_NE(editor.DimsOf("b"), nullptr);
  EXPECT_EQ((*editor.DimsOf("b"))[0].value, 3);
  {
    const auto frozen = editor.FreezeTypes();
    ir::Node* transpose = editor.Producer("b");
    editor.SetInput(transpose, 0, "y");
    ir::Node* made = editor.AddNode("Relu", "", {"y"}, {"c"}, "relu_c");
    ASSERT_NE(made, nullptr);
    EXPECT_EQ((*editor.DimsOf("b"))[0].value, 3);  // as before the edit
    EXPECT_EQ(editor.TypeOf("c"), nullptr);          // made inside the scope: no type
  }
  ASSERT_NE(editor.DimsOf("b"), nullptr);
  EXPECT_EQ((*editor.DimsOf("b"))[0].value, 7);
  ASSERT_NE(editor.DimsOf("c"), nullptr);
  EXPECT_EQ((*editor.DimsOf("c"))[1].value, 7);
}

TEST(GraphEditorFrozenTypes, WithoutTheScopeEveryEditRefreshesTheTypes) {
  auto graph = ReluTranspose();
  GraphEditor editor(*graph, {{"", 17}});
  ASSERT_NE(editor.DimsOf("b"), nullptr);
  editor.SetInput(editor.Producer("b"), 0, "y");
  EXPECT_EQ((*editor.DimsOf("b"))[0].value, 7);
}

TEST(GraphEditorFrozenTypes, NestedScopesRefreshOnlyWhenTheOuterOneEnds) {
  auto graph = ReluTranspose();
  GraphEditor editor(*graph, {{"", 17}});
  ASSERT_NE(editor.DimsOf("b"), nullptr);
  {
    const auto outer = editor.FreezeTypes();
    {
      const auto inner = editor.FreezeTypes();
      editor.SetInput(editor.Producer("b"), 0, "y");
    }
    EXPECT_EQ((*editor.DimsOf("b"))[0].value, 3);
  }
  EXPECT_EQ((*editor.DimsOf("b"))[0].value, 7);
}

}  // namespace
}  // namespace onyx
