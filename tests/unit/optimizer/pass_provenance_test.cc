// The pass manager's record of which pass created, rewrote in place or removed each node
// (OptimizationReport::provenance), against what each rewrite is known to do: ConvBatchNormFusion
// folds a BatchNormalization into its Conv (the Conv stays, rewritten; the BatchNormalization
// goes), ConvActivationFusion replaces Conv + Relu with a FusedConv, GeluFusion replaces the erf
// pattern with a Gelu. The tracker alone is checked on hand-made edits.
#include <algorithm>

#include "optimizer/fusion_test_util.h"
#include "optimizer/node_provenance.h"

namespace onyx {
namespace {

using namespace test;

constexpr float kSqrt2 = 1.41421356f;

ir::Node& Named(ir::Node& n, const std::string& name) {
  n.name = name;
  return n;
}

// x -> Conv -> BatchNormalization -> Relu -> erf GELU -> y
ModelBuilder ConvBnReluGelu() {
  ModelBuilder b(17);
  b.Input("x", DataType::kFloat, {1, 3, 6, 6}).Output("y", DataType::kFloat, {1, 4, 6, 6});
  b.Initializer("W", RandomTensor({4, 3, 3, 3}, 1)).Initializer("B", RandomTensor({4}, 2));
  b.Initializer("scale", RandomTensor({4}, 3, 0.5f, 1.5f)).Initializer("bn_b", RandomTensor({4}, 4));
  b.Initializer("mean", RandomTensor({4}, 5)).Initializer("var", RandomTensor({4}, 6, 0.5f, 2.0f));
  b.Initializer("k", Scalar(kSqrt2)).Initializer("one", Scalar(1.0f)).Initializer("half", Scalar(0.5f));
  Named(b.Node("Conv", {"x", "W", "B"}, {"c"}), "conv").attributes.push_back(IntsAttr("pads", {1, 1, 1, 1}));
  Named(b.Node("BatchNormalization", {"c", "scale", "bn_b", "mean", "var"}, {"n"}), "bn");
  Named(b.Node("Relu", {"n"}, {"r"}), "relu");
  Named(b.Node("Div", {"r", "k"}, {"d"}), "div");
  Named(b.Node("Erf", {"d"}, {"e"}), "erf");
  Named(b.Node("Add", {"e", "one"}, {"a"}), "add");
  Named(b.Node("Mul", {"r", "a"}, {"m"}), "mul");
  Named(b.Node("Mul", {"m", "half"}, {"y"}), "half_mul");
  return b;
}

const ir::Node* OnlyNode(const ir::Graph& g, const std::string& op) {
  const ir::Node* found = nullptr;
  for (const auto& n : g.nodes)
    if (n->op_type == op) {
      EXPECT_EQ(found, nullptr) << "two " << op << " nodes";
      found = n.get();
    }
  return found;
}

// The model as a session sees it (loading sets each node's opset).
std::shared_ptr<ir::Model> Loaded(const ModelBuilder& b) {
  const std::string bytes = b.Bytes();
  return LoadModelFromBytes(bytes.data(), bytes.size());
}

TEST(PassProvenance, EachFusedNodeNamesItsPassAndEachRemovedNodeToo) {
  auto model = Loaded(ConvBnReluGelu());
  OptimizerOptions options;
  options.level = OptLevel::kExtended;
  const OptimizationReport report = OptimizeModel(*model, options);
  const ir::Graph& g = *model->graph;
  ASSERT_EQ(g.nodes.size(), 2u);

  const ir::Node* fused_conv = OnlyNode(g, "FusedConv");
  const ir::Node* gelu = OnlyNode(g, "Gelu");
  ASSERT_NE(fused_conv, nullptr);
  ASSERT_NE(gelu, nullptr);
  const ProvenanceMap& p = report.provenance;
  ASSERT_TRUE(p.count(fused_conv->name));
  EXPECT_EQ(p.at(fused_conv->name).created_by, "ConvActivationFusion");
  EXPECT_EQ(p.at(fused_conv->name).op, "com.microsoft.FusedConv");
  ASSERT_TRUE(p.count(gelu->name));
  EXPECT_EQ(p.at(gelu->name).created_by, "GeluFusion");

  // The Conv was rewritten in place by the fold (it now reads the folded weights), then replaced.
  ASSERT_TRUE(p.count("conv"));
  EXPECT_EQ(p.at("conv").created_by, "");
  EXPECT_EQ(p.at("conv").rewritten_by, std::vector<std::string>{"ConvBatchNormFusion"});
  EXPECT_EQ(p.at("conv").removed_by, "ConvActivationFusion");
  EXPECT_EQ(p.at("bn").removed_by, "ConvBatchNormFusion");
  EXPECT_EQ(p.at("bn").op, "BatchNormalization");
  EXPECT_EQ(p.at("relu").removed_by, "ConvActivationFusion");
  for (const char* name : {"div", "erf", "add", "mul", "half_mul"}) {
    ASSERT_TRUE(p.count(name)) << name;
    EXPECT_EQ(p.at(name).removed_by, "GeluFusion") << name;
    EXPECT_EQ(p.at(name).created_by, "") << name;
  }
}

TEST(PassProvenance, AFoldAloneRewritesTheConvInPlace) {
  auto model = Loaded(ConvBnReluGelu());
  OptimizerOptions options;
  options.level = OptLevel::kExtended;
  options.only_passes = {"ConvBatchNormFusion"};
  const OptimizationReport report = OptimizeModel(*model, options);
  ASSERT_TRUE(report.provenance.count("conv"));
  const NodeProvenance& conv = report.provenance.at("conv");
  EXPECT_EQ(conv.rewritten_by, std::vector<std::string>{"ConvBatchNormFusion"});
  EXPECT_EQ(conv.removed_by, "");
  EXPECT_EQ(report.provenance.at("bn").removed_by, "ConvBatchNormFusion");
  // The fold rewires the Relu to read the Conv's output: a rewrite by that pass too. Nodes no
  // pass touched have no record.
  ASSERT_TRUE(report.provenance.count("relu"));
  EXPECT_EQ(report.provenance.at("relu").rewritten_by, std::vector<std::string>{"ConvBatchNormFusion"});
  EXPECT_EQ(report.provenance.at("relu").removed_by, "");
  EXPECT_EQ(report.provenance.count("erf"), 0u);
  EXPECT_EQ(report.provenance.count("half_mul"), 0u);
}

TEST(PassProvenance, NothingIsRecordedWhenNoPassRuns) {
  auto model = Loaded(ConvBnReluGelu());
  OptimizerOptions options;
  options.level = OptLevel::kDisabled;
  EXPECT_TRUE(OptimizeModel(*model, options).provenance.empty());
}

TEST(ProvenanceTracker, RecordsCreatedRewrittenAndRemovedNodes) {
  ModelBuilder b(17);
  b.Input("x", DataType::kFloat, {2}).Output("z", DataType::kFloat, {2});
  Named(b.Node("Relu", {"x"}, {"y"}), "keep");
  Named(b.Node("Neg", {"y"}, {"t"}), "gone");
  Named(b.Node("Abs", {"t"}, {"z"}), "edited");
  ir::Graph& g = *b.model().graph;
  ProvenanceTracker tracker;
  tracker.Prepare({&g});
  EXPECT_FALSE(tracker.CountChanged(g));
  ProvenanceMap out;
  // One "pass": add a Sigmoid in place of the Neg, then drop the Neg (as GraphEditor does: the
  // nodes a pass removes are freed after it made its new ones).
  auto made = std::make_unique<ir::Node>();
  made->name = "made";
  made->op_type = "Sigmoid";
  made->inputs = {"y"};
  made->outputs = {"t"};
  g.AddNode(std::move(made));
  EXPECT_TRUE(tracker.CountChanged(g));
  g.nodes.erase(std::find_if(g.nodes.begin(), g.nodes.end(), [](const auto& n) { return n->name == "gone"; }));
  EXPECT_FALSE(tracker.CountChanged(g));  // one out, one in
  tracker.Record(g, "FirstPass", out);
  EXPECT_EQ(out.at("gone").removed_by, "FirstPass");
  EXPECT_EQ(out.at("gone").op, "Neg");
  EXPECT_EQ(out.at("made").created_by, "FirstPass");
  EXPECT_EQ(out.count("keep"), 0u);
  EXPECT_EQ(out.count("edited"), 0u);
  // A second "pass" changes an attribute in place: a rewrite, not a creation.
  for (auto& n : g.nodes)
    if (n->name == "edited") n->attributes.push_back(IntsAttr("unused", {1}));
  tracker.Record(g, "SecondPass", out);
  EXPECT_EQ(out.at("edited").rewritten_by, std::vector<std::string>{"SecondPass"});
  EXPECT_EQ(out.at("edited").created_by, "");
  EXPECT_EQ(out.at("made").rewritten_by, std::vector<std::string>{});
  // Recording again with nothing changed adds nothing.
  const ProvenanceMap before = out;
  tracker.Record(g, "ThirdPass", out);
  EXPECT_EQ(out.size(), before.size());
  EXPECT_EQ(out.at("edited").rewritten_by, std::vector<std::string>{"SecondPass"});
}

}  // namespace
}  // namespace onyx
