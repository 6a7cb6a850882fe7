// Q/DQ pairs carried across data-movement ops that have none (extended, first of the QDQ
// passes), as ONNX Runtime's QDQPropagationTransformer does at level basic, so that the groups
// beyond them see a DQ / Q and fuse:
//   forward:  DQ -> MaxPool / Reshape / Transpose / Squeeze / Unsqueeze / Slice -> readers
//             => DQ -> op -> Q -> DQ (one per reader) -> readers, op after op while they chain;
//   backward: producer -> op -> ... -> Q  =>  producer -> Q -> DQ -> op -> ... -> Q, up to a DQ.
// The inserted pair carries the DQ's (Q's) constant scalar scale and zero point; the values do
// not change (these ops only move values of the grid). Conditions (ORT's): the DQ is read once
// and is no graph output; each edge followed is the single reader of a value that is no graph
// output (forward: all readers of the op's result, unless it is a graph output, edges into a Q
// skipped); the ops at the opset versions ORT lists (MaxPool 12, Reshape 5-19, Transpose 1-13,
// Squeeze / Unsqueeze 1-13, Slice 1-13 as since-versions). Onyx skips the edges ORT would carry
// into a graph output (the DQ would have to take the output's name) and values read by subgraphs.
#include "optimizer/fusion_util.h"
#include "optimizer/pass.h"
#include "optimizer/passes/qdq_selectors.h"
#include "optimizer/pattern_util.h"

namespace onyx {
namespace {

using namespace fusion;

// ORT's CanNodePropagate: the op at one of the since-versions it lists (by the node's opset).
bool CanPropagate(const ir::Node* n) {
  if (n == nullptr || !n->domain.empty() || n->outputs.empty() || n->outputs[0].empty()) return false;
  const int v = n->opset;
  if (n->op_type == "MaxPool") return v >= 12 && v < 22 && (n->outputs.size() == 1 || n->outputs[1].empty());
  if (n->op_type == "Reshape") return v >= 5 && v < 21;
  if (n->op_type == "Transpose" || n->op_type == "Squeeze" || n->op_type == "Unsqueeze") return v < 21;
  return n->op_type == "Slice";
}

// A constant one-element scale and (if any) zero point of a Q / DQ; the names.
bool ScalarParams(GraphEditor& editor, const ir::Node& n, std::string* scale, std::string* zp) {
  if (n.inputs.size() < 2 || n.inputs.size() > 3 || n.outputs.size() != 1) return false;
  const Tensor* s = editor.Constant(n.inputs[1]);
  if (s == nullptr || s->size() != 1 || s->rank() > 1) return false;
  *zp = n.inputs.size() == 3 ? n.inputs[2] : std::string();
  if (!zp->empty()) {
    const Tensor* z = editor.Constant(*zp);
    if (z == nullptr || z->size() != 1 || z->rank() > 1) return false;
  }
  *scale = n.inputs[1];
  return true;
}

struct Edge {
  ir::Node* dst;
  size_t input;
};

// The readers of `value` as edges (every input slot reading it), or nullopt when a reader reads
// it only from a subgraph.
std::optional<std::vector<Edge>> ReaderEdges(GraphEditor& editor, const std::string& value) {
  std::vector<Edge> edges;
  for (ir::Node* r : editor.Consumers(value)) {
    bool direct = false;
    for (size_t i = 0; i < r->inputs.size(); ++i)
      if (r->inputs[i] == value) {
        edges.push_back({r, i});
        direct = true;
      }
    if (!direct) return std::nullopt;
  }
  return edges;
}

class QdqPropagation final : public Pass {
 public:
  std::string name() const override { return "QdqPropagation"; }
  OptLevel level() const override { return OptLevel::kExtended; }
  std::vector<std::string> providers() const override { return {"CPU"}; }

  int Apply(PassContext& ctx) override {
    if (!qdq::HasQdqNodes(ctx.editor)) return 0;
    int rewrites = 0;
    for (ir::Node* node : ctx.editor.Nodes()) {
      if (!qdq::Live(ctx.editor, node)) continue;
      if (IsOnnxOp(node, "DequantizeLinear", 10)) rewrites += Forward(ctx, node);
    }
    for (ir::Node* node : ctx.editor.Nodes()) {
      if (!qdq::Live(ctx.editor, node)) continue;
      if (IsOnnxOp(node, "QuantizeLinear", 10)) rewrites += Backward(ctx, node);
    }
    return rewrites;
  }

 private:
  // Q(value) and one DQ per edge, the edges' readers reading their DQ.
  static void InsertPairs(GraphEditor& editor, const std::string& value, const std::vector<Edge>& edges,
                          const std::string& scale, const std::string& zp, int opset) {
    std::vector<std::string> params = {scale};
    if (!zp.empty()) params.push_back(zp);
    auto with = [&](const std::string& data) {
      std::vector<std::string> in = {data};
      in.insert(in.end(), params.begin(), params.end());
      return in;
    };
    const std::string q_out = editor.UniqueName(value + "_q_to_dq");
    AddFusedNode(editor, "QuantizeLinear", "", opset, with(value), {q_out});
    for (const Edge& e : edges) {
      const std::string dq_out = editor.UniqueName(value + "_post_dq");
      AddFusedNode(editor, "DequantizeLinear", "", opset, with(q_out), {dq_out});
      editor.SetInput(e.dst, e.input, dq_out);
    }
  }

  // The edges from a propagating op's result onward: all its readers unless the result is a
  // graph output (or read by a subgraph), without those into a Q.
  static std::vector<Edge> NextEdges(GraphEditor& editor, const ir::Node& op) {
    const std::string& value = op.outputs[0];
    if (editor.IsGraphOutput(value)) return {};
    auto edges = ReaderEdges(editor, value);
    if (!edges) return {};
    std::vector<Edge> next;
    for (const Edge& e : *edges)
      if (!IsOnnxOp(e.dst, "QuantizeLinear")) next.push_back(e);
    return next;
  }

  static int Forward(PassContext& ctx, ir::Node* dq) {
    GraphEditor& editor = ctx.editor;
    std::string scale, zp;
    if (!ScalarParams(editor, *dq, &scale, &zp)) return 0;
    ir::Node* first = SoleReader(editor, dq->outputs[0]);
    if (first == nullptr) return 0;
    int rewrites = 0;
    std::vector<ir::Node*> ops = {first};  // ops whose results get a pair
    while (!ops.empty()) {
      ir::Node* op = ops.back();
      ops.pop_back();
      if (!CanPropagate(op)) continue;
      const std::vector<Edge> edges = NextEdges(editor, *op);
      if (edges.empty()) continue;
      InsertPairs(editor, op->outputs[0], edges, scale, zp, dq->opset);
      ++ctx.counts["Q/DQ carried forward"];
      ++rewrites;
      for (const Edge& e : edges) ops.push_back(e.dst);
    }
    return rewrites;
  }

  static int Backward(PassContext& ctx, ir::Node* q) {
    GraphEditor& editor = ctx.editor;
    std::string scale, zp;
    if (!ScalarParams(editor, *q, &scale, &zp) || q->inputs.empty()) return 0;
    // The edge into the Q: its input's single reader, no graph output.
    ir::Node* op = editor.Producer(q->inputs[0]);
    if (op == nullptr || SoleReader(editor, q->inputs[0]) != q) return 0;
    int rewrites = 0;
    // Walk back through propagating ops, each the single reader of its input.
    while (CanPropagate(op) && !op->inputs.empty()) {
      const std::string value = op->inputs[0];
      ir::Node* src = editor.Producer(value);
      if (src != nullptr && (editor.IsGraphOutput(value) || SoleReader(editor, value) != op)) break;
      if (IsOnnxOp(src, "DequantizeLinear")) break;
      if (src == nullptr && !editor.graph().IsGraphInput(value) && editor.Constant(value) == nullptr &&
          !editor.graph().IsInitializer(value))
        break;  // an outer-scope value of a subgraph
      InsertPairs(editor, value, {{op, 0}}, scale, zp, q->opset);
      ++ctx.counts["Q/DQ carried backward"];
      ++rewrites;
      if (src == nullptr) break;  // a graph input or initializer: nothing before it
      op = src;
    }
    return rewrites;
  }
};

ONYX_REGISTER_PASS(QdqPropagation, 146);

}  // namespace
}  // namespace onyx
