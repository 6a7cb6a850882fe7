// Conv [+ Add(residual of the same shape)] [+ activation] becomes one FusedConv.
//
// ConvActivationFusion (extended) makes com.microsoft.FusedConv with ONNX Runtime's activations
// and parameters: Relu, Sigmoid, Tanh, LeakyRelu [alpha], HardSigmoid [alpha, beta],
// Clip [min, max] (constant bounds); the residual is FusedConv's 4th input Z, added before the
// activation: Y = act(conv(X, W) + B + Z).
//
// ConvOnyxActivationFusion (all) handles what FusedConv lacks: SiLU (x * Sigmoid(x)) and
// HardSwish (the op, HardSigmoid(1/6, 1/2) * x, or x * Clip(x + 3, 0, 6) / 6 as paddle2onnx
// writes it) become com.onyx.FusedConv, FusedConv with
// activation "Silu" or "HardSwish". Models saved with it need Onyx to run, which is why it
// only runs at level "all".
#include <cmath>
#include <limits>

#include "ops/shape_inference.h"
#include "optimizer/fusion_util.h"
#include "optimizer/pass.h"
#include "optimizer/pattern_util.h"

namespace onyx {
namespace {

using namespace fusion;

struct Activation {
  std::string name;
  std::vector<float> params;
  std::vector<ir::Node*> nodes;
  std::string output;
};

// Clip's bounds: attributes before opset 11, optional constant inputs since.
std::optional<std::vector<float>> ClipBounds(GraphEditor& editor, const ir::Node& clip) {
  float lo = std::numeric_limits<float>::lowest(), hi = std::numeric_limits<float>::max();
  if (clip.opset < 11) {
    lo = AttrFloat(clip, "min", lo);
    hi = AttrFloat(clip, "max", hi);
  } else {
    for (size_t i = 1; i < clip.inputs.size() && i < 3; ++i) {
      if (clip.inputs[i].empty()) continue;
      auto v = ConstScalar(editor, clip.inputs[i]);
      if (!v) return std::nullopt;
      (i == 1 ? lo : hi) = static_cast<float>(*v);
    }
  }
  return std::vector<float>{lo, hi};
}

// The activation ONNX Runtime's FusedConv knows, applied by the only reader of `v`.
std::optional<Activation> MatchOrtActivation(GraphEditor& editor, const std::string& v) {
  ir::Node* n = SoleReader(editor, v);
  if (n == nullptr || !n->domain.empty() || n->inputs.empty() || n->inputs[0] != v || n->outputs.size() != 1)
    return std::nullopt;
  Activation act{n->op_type, {}, {n}, n->outputs[0]};
  if (n->op_type == "Relu" || n->op_type == "Sigmoid" || n->op_type == "Tanh") return act;
  if (n->op_type == "LeakyRelu") {
    act.params = {AttrFloat(*n, "alpha", 0.01f)};
    return act;
  }
  if (n->op_type == "HardSigmoid") {
    act.params = {AttrFloat(*n, "alpha", 0.2f), AttrFloat(*n, "beta", 0.5f)};
    return act;
  }
  if (n->op_type == "Clip") {
    auto bounds = ClipBounds(editor, *n);
    if (!bounds) return std::nullopt;
    act.params = *bounds;
    return act;
  }
  return std::nullopt;
}

// A constant of one element near `expected` that broadcasts to no higher rank than `v`'s.
bool IsScalarConst(GraphEditor& editor, const std::string& c, double expected, int64_t v_rank) {
  const int64_t rank = RankOf(editor, c);
  return rank >= 0 && (rank <= 1 || rank <= v_rank) && IsConstNear(editor, c, expected, 1e-6);
}

// x * Clip(x + 3, 0, 6) / 6 (or * 1/6) over `v`: `add` and `mul` are v's two readers.
std::optional<Activation> MatchClipHardSwish(GraphEditor& editor, const TypeMap& types, const std::string& v,
                                             ir::Node* add, ir::Node* mul) {
  if (!IsOnnxOp(add, "Add", 7) || add->inputs.size() != 2 || !IsOnnxOp(mul, "Mul", 7) || mul->inputs.size() != 2)
    return std::nullopt;
  const auto* v_dims = SnapshotDims(types, v);
  const int64_t v_rank = v_dims != nullptr ? static_cast<int64_t>(v_dims->size()) : -1;
  if (!IsScalarConst(editor, OtherInput(*add, v), 3.0, v_rank)) return std::nullopt;
  ir::Node* clip = SoleReader(editor, add->outputs[0]);
  if (!IsOnnxOp(clip, "Clip", 6) || clip->inputs[0] != add->outputs[0]) return std::nullopt;
  auto bounds = ClipBounds(editor, *clip);
  if (!bounds || (*bounds)[0] != 0.0f || (*bounds)[1] != 6.0f) return std::nullopt;
  if (SoleReader(editor, clip->outputs[0]) != mul || OtherInput(*mul, clip->outputs[0]) != v) return std::nullopt;
  ir::Node* scale = SoleReader(editor, mul->outputs[0]);
  if (scale == nullptr || scale->inputs.size() != 2) return std::nullopt;
  const bool div6 = IsOnnxOp(scale, "Div", 7) && scale->inputs[0] == mul->outputs[0] &&
                    IsScalarConst(editor, scale->inputs[1], 6.0, v_rank);
  const bool mul_sixth = IsOnnxOp(scale, "Mul", 7) && scale->inputs[0] != scale->inputs[1] &&
                         IsScalarConst(editor, OtherInput(*scale, mul->outputs[0]), 1.0 / 6.0, v_rank);
  if (!div6 && !mul_sixth) return std::nullopt;
  return Activation{"HardSwish", {}, {add, clip, mul, scale}, scale->outputs[0]};
}

// SiLU or HardSwish over `v`, which only the activation's nodes read.
std::optional<Activation> MatchOnyxActivation(GraphEditor& editor, const TypeMap& types, const std::string& v) {
  if (v.empty() || editor.IsGraphOutput(v)) return std::nullopt;
  const auto& readers = editor.Consumers(v);
  if (readers.size() == 1 && IsOnnxOp(readers[0], "HardSwish", 14) && readers[0]->inputs[0] == v)
    return Activation{"HardSwish", {}, {readers[0]}, readers[0]->outputs[0]};
  if (readers.size() != 2) return std::nullopt;
  for (int i = 0; i < 2; ++i) {
    ir::Node* gate = readers[i];
    ir::Node* mul = readers[1 - i];
    if (auto hard_swish = MatchClipHardSwish(editor, types, v, gate, mul)) return hard_swish;
    if (!IsOnnxOp(mul, "Mul", 7) || gate->inputs.empty() || gate->inputs[0] != v) continue;
    if (SoleReader(editor, gate->outputs[0]) != mul || OtherInput(*mul, gate->outputs[0]) != v) continue;
    if (IsOnnxOp(gate, "Sigmoid")) return Activation{"Silu", {}, {gate, mul}, mul->outputs[0]};
    if (IsOnnxOp(gate, "HardSigmoid") && std::fabs(AttrFloat(*gate, "alpha", 0.2f) - 1.0f / 6.0f) < 1e-6f &&
        AttrFloat(*gate, "beta", 0.5f) == 0.5f)
      return Activation{"HardSwish", {}, {gate, mul}, mul->outputs[0]};
  }
  return std::nullopt;
}

// The residual added to a Conv's output: Add(conv, z) with z of the conv output's exact dims.
struct Residual {
  ir::Node* add = nullptr;
  std::string z;
};

std::optional<Residual> MatchResidual(GraphEditor& editor, const TypeMap& types, const std::string& conv_out) {
  ir::Node* add = SoleReader(editor, conv_out);
  if (!IsOnnxOp(add, "Add", 7) || add->inputs.size() != 2) return std::nullopt;
  const std::string& z = OtherInput(*add, conv_out);
  if (z.empty() || z == conv_out || SnapshotElemType(types, z) != SnapshotElemType(types, conv_out))
    return std::nullopt;
  const auto* zd = SnapshotDims(types, z);
  const auto* cd = SnapshotDims(types, conv_out);
  if (zd == nullptr || cd == nullptr || !SameDims(*zd, *cd)) return std::nullopt;
  return Residual{add, z};
}

ir::Node* MakeFusedConv(GraphEditor& editor, const ir::Node& conv, const char* domain, const std::string& z,
                        const std::optional<Activation>& act, const std::string& output) {
  std::vector<std::string> inputs = conv.inputs;  // a FusedConv anchor keeps its Z
  if (!z.empty()) {
    inputs.resize(3);
    inputs.push_back(z);
  }
  ir::Node* fused = AddFusedNode(editor, "FusedConv", domain, 1, inputs, {output});
  for (const auto& a : conv.attributes) fused->attributes.push_back(a.Clone());
  if (act) {
    fused->attributes.push_back(StringAttr("activation", act->name));
    if (!act->params.empty()) fused->attributes.push_back(FloatsAttr("activation_params", act->params));
  }
  return fused;
}

// Fuses Conv [+ residual] [+ activation]. With `onyx_activations`, only SiLU/HardSwish are
// fused (into com.onyx.FusedConv), also after a com.microsoft.FusedConv that has no
// activation yet.
int FuseConvActivations(PassContext& ctx, bool onyx_activations) {
  GraphEditor& editor = ctx.editor;
  int rewrites = 0;
  if (!CanRun(ctx, "FusedConv", onyx_activations ? kOnyxDomain : kMsDomain, 1)) return 0;
  std::vector<ir::Node*> anchors = editor.NodesOfType("Conv");
  if (onyx_activations)
    for (ir::Node* n : editor.NodesOfType("FusedConv", kMsDomain))
      if (n->FindAttribute("activation") == nullptr) anchors.push_back(n);
  // The types before any rewrite (asking the editor after each one was quadratic: 55% of
  // EfficientNet-B0's session creation). A fusion keeps the types of the values it leaves.
  const TypeMap types = anchors.empty() ? TypeMap{} : editor.TypeSnapshot();
  for (ir::Node* conv : anchors) {
    if (conv->outputs.size() != 1 || conv->inputs.size() < 2) continue;
    const std::string& out = conv->outputs[0];
    // ONNX Runtime's FusedConv is float only; a conv's type is its weights' when not inferred.
    DataType dt = SnapshotElemType(types, out);
    if (dt == DataType::kUndefined)
      if (auto w = ConstValue(editor, conv->inputs[1])) dt = w->dtype();
    if (dt != DataType::kFloat) continue;
    std::optional<Residual> residual;
    if (conv->domain.empty()) residual = MatchResidual(editor, types, out);
    const std::string pre_activation = residual ? residual->add->outputs[0] : out;
    auto act =
        onyx_activations ? MatchOnyxActivation(editor, types, pre_activation) : MatchOrtActivation(editor, pre_activation);
    if (!act && (onyx_activations || !residual)) continue;
    std::vector<ir::Node*> removed = {conv};
    if (residual) removed.push_back(residual->add);
    if (act) removed.insert(removed.end(), act->nodes.begin(), act->nodes.end());
    const std::string result = act ? act->output : pre_activation;
    const ir::Node saved = *conv;
    RemoveAll(editor, removed);
    MakeFusedConv(editor, saved, onyx_activations ? kOnyxDomain : kMsDomain, residual ? residual->z : "", act, result);
    ++ctx.counts[std::string(onyx_activations ? "com.onyx" : "com.microsoft") + ".FusedConv" + (residual ? "+Z" : "") +
                 (act ? "+" + act->name : "")];
    ++rewrites;
  }
  return rewrites;
}

class ConvActivationFusion final : public Pass {
 public:
  std::string name() const override { return "ConvActivationFusion"; }
  OptLevel level() const override { return OptLevel::kExtended; }
  std::vector<std::string> providers() const override { return {"CPU"}; }
  int Apply(PassContext& ctx) override { return FuseConvActivations(ctx, false); }
};

class ConvOnyxActivationFusion final : public Pass {
 public:
  std::string name() const override { return "ConvOnyxActivationFusion"; }
  OptLevel level() const override { return OptLevel::kAll; }
  std::vector<std::string> providers() const override { return {"CPU"}; }
  int Apply(PassContext& ctx) override { return FuseConvActivations(ctx, true); }
};

ONYX_REGISTER_PASS(ConvActivationFusion, 220);
ONYX_REGISTER_PASS(ConvOnyxActivationFusion, 225);

// com.onyx.FusedConv has Conv's output type and shape, as com.microsoft.FusedConv.
void OnyxFusedConvRule(InferenceContext& ctx) {
  if (const InferenceRule* rule = FindInferenceRule(kMsDomain, "FusedConv")) (*rule)(ctx);
}
ONYX_INFERENCE_RULE("com.onyx", "FusedConv", OnyxFusedConvRule);

}  // namespace
}  // namespace onyx
