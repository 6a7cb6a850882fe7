// QDQ node groups around element-wise, pooling and activation ops become com.microsoft QLinear
// ops (extended), as ONNX Runtime's QDQ selectors (binary, variadic and unary) make them:
//   DQ(a), DQ(b) -> Add / Mul -> Q                         => QLinearAdd / QLinearMul
//   DQ(x1), ..., DQ(xn) -> Concat -> Q                     => QLinearConcat
//   DQ(x) -> AveragePool / GlobalAveragePool / Sigmoid / LeakyRelu / Softmax -> Q
//                                                          => QLinearAveragePool, ...
//   Where(condition, DQ(x), DQ(y)) -> Q                    => QLinearWhere
// Every input (but Where's condition) comes from a qualifying DQ, the op's output is read only
// by one Q, all scales and zero points are per tensor and constant, and the integer types of the
// inputs and the output are one and the same (uint8 or int8). Anything else leaves the group as
// it is.
#include "optimizer/fusion_util.h"
#include "optimizer/pass.h"
#include "optimizer/passes/qdq_selectors.h"
#include "optimizer/pattern_util.h"

namespace onyx {
namespace {

using namespace fusion;
using qdq::QuantParams;

struct UnaryRule {
  const char* op;
  const char* fused;
  std::vector<std::string> attributes;  // copied as they are
};

const std::vector<UnaryRule>& UnaryRules() {
  static const std::vector<UnaryRule> rules = {
      {"AveragePool", "QLinearAveragePool", {"auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads", "strides"}},
      {"GlobalAveragePool", "QLinearGlobalAveragePool", {}},
      {"Sigmoid", "QLinearSigmoid", {}},
      {"LeakyRelu", "QLinearLeakyRelu", {"alpha"}},
      {"Softmax", "QLinearSoftmax", {}},
  };
  return rules;
}

// The DQ nodes of the inputs of `node` from `first` on (all required to be DQs with per-tensor
// parameters of one type), or an empty vector.
std::vector<ir::Node*> InputDequantizes(GraphEditor& editor, const ir::Node& node, size_t first,
                                        std::vector<QuantParams>* params) {
  std::vector<ir::Node*> dqs;
  params->clear();
  for (size_t i = first; i < node.inputs.size(); ++i) {
    const std::string& in = node.inputs[i];
    QuantParams p;
    ir::Node* dq = qdq::DequantizeOf(editor, in, &p);
    if (dq == nullptr || !p.per_tensor || (!params->empty() && p.type != params->front().type)) return {};
    dqs.push_back(dq);
    params->push_back(p);
  }
  return dqs;
}

class QdqOpFusion final : public Pass {
 public:
  std::string name() const override { return "QdqOpFusion"; }
  OptLevel level() const override { return OptLevel::kExtended; }
  std::vector<std::string> providers() const override { return {"CPU"}; }

  int Apply(PassContext& ctx) override {
    if (!qdq::HasQdqNodes(ctx.editor)) return 0;
    int rewrites = 0;
    for (ir::Node* node : ctx.editor.Nodes()) {
      if (!qdq::Live(ctx.editor, node)) continue;  // removed by an earlier rewrite of this round
      if (!node->domain.empty() || node->outputs.size() != 1 || node->inputs.empty()) continue;
      if (node->op_type == "Add" || node->op_type == "Mul") {
        rewrites += Fuse(ctx, node, "QLinear" + node->op_type, 2);
      } else if (node->op_type == "Concat") {
        rewrites += Fuse(ctx, node, "QLinearConcat", -1);
      } else if (node->op_type == "Where" && node->opset >= 9) {
        rewrites += Fuse(ctx, node, "QLinearWhere", 3);
      } else {
        for (const auto& rule : UnaryRules())
          if (node->op_type == rule.op) rewrites += Fuse(ctx, node, rule.fused, 1);
      }
    }
    return rewrites;
  }

 private:
  // num_inputs: the count the op must have (-1: any, for Concat).
  static int Fuse(PassContext& ctx, ir::Node* node, const std::string& fused_op, int num_inputs) {
    GraphEditor& editor = ctx.editor;
    if (num_inputs >= 0 && static_cast<int>(node->inputs.size()) != num_inputs) return 0;
    if (node->op_type == "AveragePool") {
      for (int64_t d : AttrInts(*node, "dilations"))
        if (d != 1) return 0;
    }
    // Where's condition is bool: it stays an input as it is, and the DQs feed X and Y.
    const bool where = fused_op == "QLinearWhere";
    std::vector<QuantParams> in;
    std::vector<ir::Node*> dqs = InputDequantizes(editor, *node, where ? 1 : 0, &in);
    if (dqs.empty()) return 0;
    QuantParams y;
    ir::Node* q = qdq::SoleQuantizeReader(editor, node->outputs[0], &y);
    if (q == nullptr || !y.per_tensor || y.type != in.front().type) return 0;
    if (!CanRun(ctx, fused_op, kMsDomain, 1)) return 0;

    std::vector<std::string> inputs;
    if (fused_op == "QLinearConcat") {
      inputs = {y.scale, qdq::ZeroPointOrZero(editor, y)};
      for (size_t i = 0; i < dqs.size(); ++i) {
        inputs.push_back(dqs[i]->inputs[0]);
        inputs.push_back(in[i].scale);
        inputs.push_back(qdq::ZeroPointOrZero(editor, in[i]));
      }
    } else {
      if (where) inputs.push_back(node->inputs[0]);
      for (size_t i = 0; i < dqs.size(); ++i) {
        inputs.push_back(dqs[i]->inputs[0]);
        inputs.push_back(in[i].scale);
        inputs.push_back(qdq::ZeroPointOrZero(editor, in[i]));
      }
      inputs.push_back(y.scale);
      inputs.push_back(qdq::ZeroPointOrZero(editor, y));
    }
    const std::string out = q->outputs[0];
    const ir::Node original = *node;
    RemoveAll(editor, {node, q});
    qdq::RemoveUnusedDequantizes(editor, dqs);
    ir::Node* fused = AddFusedNode(editor, fused_op, kMsDomain, 1, inputs, {out});
    if (fused_op == "QLinearConcat") {
      qdq::CopyAttributes(original, fused, {"axis"});
    } else if (fused_op == "QLinearSoftmax") {
      // The Softmax's own semantics: before opset 13 over the flattened trailing axes from
      // `axis` (default 1), since 13 over `axis` alone (default -1).
      fused->attributes.push_back(IntAttr("axis", AttrInt(original, "axis", original.opset < 13 ? 1 : -1)));
      fused->attributes.push_back(IntAttr("opset", original.opset));
    } else {
      for (const auto& rule : UnaryRules())
        if (fused_op == rule.fused) qdq::CopyAttributes(original, fused, rule.attributes);
    }
    ++ctx.counts[fused_op];
    return 1;
  }
};

ONYX_REGISTER_PASS(QdqOpFusion, 151);

}  // namespace
}  // namespace onyx
