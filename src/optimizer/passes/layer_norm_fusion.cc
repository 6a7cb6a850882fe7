// A decomposed layer normalization over the last k axes becomes LayerNormalization (extended),
// in the default domain as ONNX Runtime writes it (ONNX's op from opset 17; before that
// ONNX Runtime's own LayerNormalization, which it registers in the default domain for every
// opset). Two exporter forms:
//   torch:  d = x - ReduceMean(x); y = d / sqrt(ReduceMean(d^2) + eps) * scale + bias
//           (d^2 as Pow(d, 2) or d*d; the division as Div or Mul by Reciprocal; older torch
//           duplicates the Sub; scale and bias optional)
//   Keras:  m = ReduceMean(x); d = x - m; s = scale / sqrt(ReduceMean(d*d) + eps);
//           y = x * s + (bias - m * s)
#include "optimizer/fusion_util.h"
#include "optimizer/pass.h"
#include "optimizer/passes/layer_norm_pattern.h"
#include "optimizer/pattern_util.h"

namespace onyx {
namespace {

using namespace fusion;

struct LayerNormMatch {
  double epsilon = 0;
  std::string scale, bias, output;
  std::vector<ir::Node*> nodes;
};

// d^2 computed from d: Pow(d, 2) or Mul(d, d).
bool IsSquareOf(GraphEditor& editor, const ir::Node* n, const std::string& d) {
  if (IsOnnxOp(n, "Pow", 7))
    return n->inputs.size() == 2 && n->inputs[0] == d && IsConstNear(editor, n->inputs[1], 2.0, 0) &&
           RankOf(editor, n->inputs[1]) <= RankOf(editor, d);
  return IsOnnxOp(n, "Mul", 7) && n->inputs.size() == 2 && n->inputs[0] == d && n->inputs[1] == d;
}

// ReduceMean(square of d) over the same trailing axes.
ir::Node* MatchVariance(GraphEditor& editor, const std::string& d, int64_t k, ir::Node*& square) {
  for (ir::Node* sq : editor.Consumers(d)) {
    if (!IsSquareOf(editor, sq, d)) continue;
    ir::Node* var = SoleReader(editor, sq->outputs[0]);
    if (var != nullptr && var->inputs[0] == sq->outputs[0] && TrailingReduceCount(editor, *var) == k) {
      square = sq;
      return var;
    }
  }
  return nullptr;
}

bool IsCentering(const ir::Node* n, const std::string& x, const std::string& mean) {
  return IsOnnxOp(n, "Sub", 7) && n->inputs.size() == 2 && n->inputs[0] == x && n->inputs[1] == mean;
}

std::optional<LayerNormMatch> MatchTorchForm(GraphEditor& editor, ir::Node* mean, int64_t k,
                                             const std::vector<Dim>& norm_dims, DataType dt) {
  const std::string& x = mean->inputs[0];
  const auto& readers = editor.Consumers(mean->outputs[0]);
  if (readers.empty() || readers.size() > 2) return std::nullopt;
  for (ir::Node* sub : readers)
    if (!IsCentering(sub, x, mean->outputs[0])) return std::nullopt;
  for (ir::Node* first : readers) {
    ir::Node* square = nullptr;
    ir::Node* var = MatchVariance(editor, first->outputs[0], k, square);
    if (var == nullptr) continue;
    for (ir::Node* second : readers) {
      auto norm = MatchNormalize(editor, var->outputs[0], second->outputs[0]);
      if (!norm) continue;
      AffineMatch affine = MatchAffine(editor, norm->normalized, norm_dims, dt);
      LayerNormMatch m{norm->epsilon, affine.scale, affine.bias, affine.output, {mean}};
      m.nodes.insert(m.nodes.end(), readers.begin(), readers.end());
      m.nodes.push_back(square);
      m.nodes.push_back(var);
      m.nodes.insert(m.nodes.end(), norm->nodes.begin(), norm->nodes.end());
      m.nodes.insert(m.nodes.end(), affine.nodes.begin(), affine.nodes.end());
      return m;
    }
  }
  return std::nullopt;
}

std::optional<LayerNormMatch> MatchKerasForm(GraphEditor& editor, ir::Node* mean, int64_t k,
                                             const std::vector<Dim>& norm_dims, DataType dt) {
  const std::string& x = mean->inputs[0];
  const std::string& m_out = mean->outputs[0];
  const auto& readers = editor.Consumers(m_out);
  if (readers.size() != 2) return std::nullopt;
  ir::Node* sub = IsCentering(readers[0], x, m_out) ? readers[0] : readers[1];
  ir::Node* mean_scaled = sub == readers[0] ? readers[1] : readers[0];
  if (!IsCentering(sub, x, m_out) || !IsOnnxOp(mean_scaled, "Mul", 7)) return std::nullopt;
  ir::Node* square = nullptr;
  ir::Node* var = MatchVariance(editor, sub->outputs[0], k, square);
  if (var == nullptr) return std::nullopt;
  // 1 / sqrt(var + eps)
  ir::Node* add = SoleReader(editor, var->outputs[0]);
  if (!IsOnnxOp(add, "Add", 7) || add->inputs.size() != 2) return std::nullopt;
  auto eps = ConstScalar(editor, OtherInput(*add, var->outputs[0]));
  ir::Node* sqrt = SoleReader(editor, add->outputs[0]);
  if (!eps || *eps < 0 || !IsOnnxOp(sqrt, "Sqrt")) return std::nullopt;
  ir::Node* recip = SoleReader(editor, sqrt->outputs[0]);
  if (!IsOnnxOp(recip, "Reciprocal")) return std::nullopt;
  LayerNormMatch m{*eps, "", "", "", {mean, sub, square, var, add, sqrt, recip}};
  // s = rstd [* scale]
  std::string s = recip->outputs[0];
  ir::Node* scale_mul = SoleReader(editor, s);
  if (IsOnnxOp(scale_mul, "Mul", 7) && scale_mul->inputs.size() == 2) {
    auto scale = AffineOperand(editor, OtherInput(*scale_mul, s), norm_dims, dt);
    if (!scale) return std::nullopt;
    m.scale = *scale;
    m.nodes.push_back(scale_mul);
    s = scale_mul->outputs[0];
  }
  const auto& s_readers = editor.Consumers(s);
  if (s_readers.size() != 2 || OtherInput(*mean_scaled, m_out) != s) return std::nullopt;
  ir::Node* x_scaled = s_readers[0] == mean_scaled ? s_readers[1] : s_readers[0];
  if (!IsOnnxOp(x_scaled, "Mul", 7) || OtherInput(*x_scaled, s) != x) return std::nullopt;
  m.nodes.push_back(mean_scaled);
  m.nodes.push_back(x_scaled);
  // y = x*s + (bias - m*s), or x*s - m*s without a bias.
  ir::Node* y = SoleReader(editor, x_scaled->outputs[0]);
  ir::Node* offset = SoleReader(editor, mean_scaled->outputs[0]);
  if (y == offset && IsOnnxOp(y, "Sub", 7) && y->inputs.size() == 2 && y->inputs[0] == x_scaled->outputs[0]) {
    m.nodes.push_back(y);
    m.output = y->outputs[0];
    return m;
  }
  if (!IsOnnxOp(offset, "Sub", 7) || offset->inputs.size() != 2 || offset->inputs[1] != mean_scaled->outputs[0])
    return std::nullopt;
  if (!IsOnnxOp(y, "Add", 7) || OtherInput(*y, x_scaled->outputs[0]) != offset->outputs[0]) return std::nullopt;
  auto bias = AffineOperand(editor, offset->inputs[0], norm_dims, dt);
  if (!bias) return std::nullopt;
  m.bias = *bias;
  m.nodes.push_back(offset);
  m.nodes.push_back(y);
  m.output = y->outputs[0];
  return m;
}

class LayerNormFusion final : public Pass {
 public:
  std::string name() const override { return "LayerNormFusion"; }
  OptLevel level() const override { return OptLevel::kExtended; }
  std::vector<std::string> providers() const override { return {"CPU"}; }

  int Apply(PassContext& ctx) override {
    GraphEditor& editor = ctx.editor;
    int rewrites = 0;
    for (ir::Node* mean : editor.NodesOfType("ReduceMean")) {
      auto k = TrailingReduceCount(editor, *mean);
      if (!k || editor.IsGraphOutput(mean->outputs[0])) continue;
      if (!CanRun(ctx, "LayerNormalization", "", mean->opset)) continue;
      const std::string x = mean->inputs[0];
      const DataType dt = ElemType(editor, x);
      if (!TypeIn(dt, {DataType::kFloat, DataType::kFloat16, DataType::kDouble})) continue;
      const auto& dims = *editor.DimsOf(x);
      const std::vector<Dim> norm_dims(dims.end() - *k, dims.end());
      auto m = MatchTorchForm(editor, mean, *k, norm_dims, dt);
      if (!m) m = MatchKerasForm(editor, mean, *k, norm_dims, dt);
      if (!m) continue;
      bool contained = true;  // intermediate values stay inside the pattern
      for (ir::Node* n : m->nodes)
        if (n->outputs[0] != m->output && !OnlyReadBy(editor, n->outputs[0], m->nodes)) contained = false;
      if (!contained) continue;
      std::string scale = m->scale;
      if (scale.empty()) {
        auto ones = FilledOperand(editor, norm_dims, dt, 1.0, mean->name + "_ln_scale");
        if (!ones) continue;
        scale = *ones;
      }
      const int opset = mean->opset;
      RemoveAll(editor, m->nodes);
      ir::Node* ln = AddFusedNode(editor, "LayerNormalization", "", opset, {x, scale, m->bias}, {m->output});
      ln->attributes = {IntAttr("axis", -*k), FloatAttr("epsilon", static_cast<float>(m->epsilon)),
                        IntAttr("stash_type", 1)};
      ++ctx.counts["LayerNormalization"];
      ++rewrites;
    }
    return rewrites;
  }
};

ONYX_REGISTER_PASS(LayerNormFusion, 320);

}  // namespace
}  // namespace onyx
