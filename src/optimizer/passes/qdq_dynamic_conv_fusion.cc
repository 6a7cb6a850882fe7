// Dynamically quantized Convs (onnxruntime.quantization.quantize_dynamic's form) become one
// com.onyx DynamicQuantizeConv (providers/cpu/kernels/quantization/dynamic_quantize_conv.cc):
//   (q, s, z) = DynamicQuantizeLinear(x)
//   Y = Mul(Cast<float>(ConvInteger(q, W, z [, w_zp])), Mul(s, w_scale)) [+ B]
//   => DynamicQuantizeConv(x, W, w_scale, w_zp, B)   with ConvInteger's attributes
// W and w_zp are constant; w_scale and B are float constants broadcasting along the channel axis
// only (one value or one per output channel: quantize_dynamic writes a scalar w_scale and B
// reshaped to [1, M, 1, 1]); then a residual Add of another float value of the result's dims
// (ResNet's shortcut; dims proven by shape inference or the model's value_info) joins as input
// 6, Z. The ConvInteger, Cast, Mul and Add outputs must be read only inside the pattern and be
// no graph outputs. The fused node quantizes x itself, so a
// DynamicQuantizeLinear read by other nodes too stays for them (each fused reader repeats its
// quantization: the same codes) and goes when its last reader is fused. A Relu or Clip (constant
// bounds) reading the result alone joins as the node's activation, as does a SiLU (Sigmoid(y)
// and Mul(y, Sigmoid(y)) its only readers). Then a fused node read only by
// fused nodes (as their x) hands them its output's range (LinkRange), or, where its output is
// cheap to recompute, its output's codes in place of the output. Onyx's own op: made at
// OptLevel::kAll only (a saved model needs Onyx to run it).
#include <limits>

#include "optimizer/fusion_util.h"
#include "optimizer/pass.h"
#include "optimizer/passes/qdq_selectors.h"
#include "optimizer/pattern_util.h"

namespace onyx {
namespace {

using namespace fusion;

// The [min, max] a Relu (0, +inf) or Clip applies, as its kernel does: opsets 6-10 read the
// attributes (default -FLT_MAX, FLT_MAX), from 11 optional constant float inputs (default
// -inf, +inf); false for anything else (opset 1's Clip, non-constant bounds).
bool ActivationBounds(GraphEditor& editor, const ir::Node& n, std::vector<float>* bounds) {
  if (IsOnnxOp(&n, "Relu")) {
    *bounds = {0.0f, std::numeric_limits<float>::infinity()};
    return n.inputs.size() == 1;
  }
  if (!IsOnnxOp(&n, "Clip", 6)) return false;
  if (n.opset < 11) {
    if (n.inputs.size() != 1) return false;
    *bounds = {AttrFloat(n, "min", std::numeric_limits<float>::lowest()),
               AttrFloat(n, "max", std::numeric_limits<float>::max())};
    return true;
  }
  *bounds = {-std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity()};
  for (size_t i = 1; i < n.inputs.size(); ++i) {
    if (i > 2) return false;
    if (n.inputs[i].empty()) continue;
    auto v = ConstValue(editor, n.inputs[i]);
    if (!v || v->dtype() != DataType::kFloat || v->size() != 1) return false;
    (*bounds)[i - 1] = v->data<float>()[0];
  }
  return true;
}

class QdqDynamicConvFusion final : public Pass {
 public:
  std::string name() const override { return "QdqDynamicConvFusion"; }
  OptLevel level() const override { return OptLevel::kAll; }
  std::vector<std::string> providers() const override { return {"CPU"}; }

  int Apply(PassContext& ctx) override {
    int rewrites = 0;
    const std::vector<ir::Node*> convs = ctx.editor.NodesOfType("ConvInteger");
    // The types before any rewrite (fusions keep the types of the values they leave).
    const TypeMap types = convs.empty() ? TypeMap{} : ctx.editor.TypeSnapshot();
    for (ir::Node* conv : convs)
      if (qdq::Live(ctx.editor, conv)) rewrites += Fuse(ctx, types, conv);
    for (ir::Node* node : ctx.editor.NodesOfType("DynamicQuantizeConv", kOnyxDomain))
      if (qdq::Live(ctx.editor, node)) rewrites += LinkRange(ctx, node);
    return rewrites;
  }

 private:
  static bool IsDynamicConv(const ir::Node* n) {
    return n != nullptr && n->op_type == "DynamicQuantizeConv" && n->domain == kOnyxDomain;
  }

  // Convs whose output the kernel can recompute in cache-sized pieces for less than a float
  // tensor's trip through memory costs (dynamic_conv_codes.h): 2-D pointwise (group 1, stride 1,
  // no padding) over at most kCheapDepth input channels, or 2-D depthwise; no SiLU after.
  static constexpr int64_t kCheapDepth = 160;
  static bool CheapToRecompute(GraphEditor& editor, const ir::Node& n) {
    if (AttrString(n, "activation", "") == "Silu") return false;  // its Sigmoid would double the cost
    if (n.inputs.size() > 6 && !n.inputs[6].empty()) return false;  // a residual: read twice
    auto w = ConstValue(editor, n.inputs[1]);
    if (!w || w->rank() != 4) return false;
    const int64_t group = AttrInt(n, "group", 1), m = w->dim(0);
    const std::string auto_pad = AttrString(n, "auto_pad", "NOTSET");
    if (group > 1) return group == m && w->dim(1) == 1;
    if (w->dim(1) > kCheapDepth || w->dim(2) != 1 || w->dim(3) != 1) return false;
    for (int64_t v : AttrInts(n, "strides"))
      if (v != 1) return false;
    for (int64_t v : AttrInts(n, "pads"))
      if (v != 0) return false;
    return auto_pad == "NOTSET" || auto_pad == "VALID";
  }

  // A DynamicQuantizeConv whose Y only other DynamicQuantizeConvs read, as their X: Y's range
  // becomes its second output (taken while Y is written) and their X_range input, so they skip
  // the pass over X that DynamicQuantizeLinear's range is. The same values: min and max are exact.
  // Where Y is cheap to recompute, the producer hands Y's codes instead (third output, Y itself
  // dropped) and the readers take them as X: the same codes each reader would have made.
  static int LinkRange(PassContext& ctx, ir::Node* producer) {
    GraphEditor& editor = ctx.editor;
    if (producer->outputs.size() != 1) return 0;
    const std::string y = producer->outputs[0];
    if (editor.IsGraphOutput(y)) return 0;
    const std::vector<ir::Node*> readers = editor.Consumers(y);
    if (readers.empty()) return 0;
    for (const ir::Node* r : readers) {
      if (!IsDynamicConv(r) || r->inputs.empty() || r->inputs[0] != y || r->inputs.size() > 7 ||
          (r->inputs.size() > 5 && !r->inputs[5].empty()))
        return 0;
      for (size_t i = 1; i < r->inputs.size(); ++i)
        if (r->inputs[i] == y) return 0;
    }
    const bool codes = CheapToRecompute(editor, *producer);
    const std::string range = editor.UniqueName(y + "_range");
    const std::string y_codes = codes ? editor.UniqueName(y + "_codes") : std::string();
    const std::vector<std::string> inputs = producer->inputs;
    const std::vector<ir::Attribute> attributes = producer->attributes;
    editor.RemoveNode(producer);
    ir::Node* linked = AddFusedNode(editor, "DynamicQuantizeConv", kOnyxDomain, 1, inputs,
                                    codes ? std::vector<std::string>{"", range, y_codes}
                                          : std::vector<std::string>{y, range});
    linked->attributes = attributes;
    for (ir::Node* r : readers) {
      while (r->inputs.size() < 5) editor.SetInput(r, r->inputs.size(), "");
      editor.SetInput(r, 5, range);
      if (codes) editor.SetInput(r, 0, y_codes);
    }
    ++ctx.counts["DynamicQuantizeConv range links"];
    if (codes) ++ctx.counts["DynamicQuantizeConv code links"];
    return 1;
  }

  // The Sigmoid of a SiLU over v: v read only by Sigmoid(v) and Mul(v, Sigmoid(v)) (either
  // order), the Sigmoid only by the Mul; null otherwise.
  static ir::Node* SiluGate(GraphEditor& editor, const std::string& v) {
    if (editor.IsGraphOutput(v)) return nullptr;
    const std::vector<ir::Node*> readers = editor.Consumers(v);
    if (readers.size() != 2) return nullptr;
    for (int i = 0; i < 2; ++i) {
      ir::Node* gate = readers[static_cast<size_t>(i)];
      ir::Node* mul = readers[static_cast<size_t>(1 - i)];
      if (!IsOnnxOp(gate, "Sigmoid", 6) || gate->inputs.size() != 1 || gate->inputs[0] != v ||
          gate->outputs.size() != 1 || editor.IsGraphOutput(gate->outputs[0]))
        continue;
      if (!IsOnnxOp(mul, "Mul", 7) || mul->inputs.size() != 2 || mul->outputs.size() != 1) continue;
      if (SoleReader(editor, gate->outputs[0]) != mul || OtherInput(*mul, gate->outputs[0]) != v) continue;
      return gate;
    }
    return nullptr;
  }

  // Float values of the same known dims in the snapshot.
  static bool SameFloatDims(const TypeMap& types, const std::string& a, const std::string& b) {
    const auto ia = types.find(a), ib = types.find(b);
    if (ia == types.end() || ib == types.end()) return false;
    const TypeInfo& ta = *ia->second;
    const TypeInfo& tb = *ib->second;
    return ta.kind == TypeInfo::Kind::kTensor && tb.kind == TypeInfo::Kind::kTensor &&
           ta.elem_type == DataType::kFloat && tb.elem_type == DataType::kFloat && ta.shape && tb.shape &&
           SameDims(*ta.shape, *tb.shape);
  }

  static int Fuse(PassContext& ctx, const TypeMap& types, ir::Node* conv) {
    GraphEditor& editor = ctx.editor;
    if (!IsOnnxOp(conv, "ConvInteger", 10) || conv->inputs.size() < 3 || conv->outputs.size() != 1) return 0;
    // x from DynamicQuantizeLinear, with its zero point.
    ir::Node* dql = editor.Producer(conv->inputs[0]);
    if (!IsOnnxOp(dql, "DynamicQuantizeLinear", 11) || dql->inputs.size() != 1 || dql->outputs.size() != 3 ||
        dql->outputs[0] != conv->inputs[0] || conv->inputs[2] != dql->outputs[2])
      return 0;
    // W: a constant int8/uint8 weight of rank >= 3; its zero point constant, 1 or M values.
    auto w = ConstValue(editor, conv->inputs[1]);
    if (!w || w->rank() < 3 || (w->dtype() != DataType::kInt8 && w->dtype() != DataType::kUInt8)) return 0;
    const int64_t m = w->dim(0), rank = static_cast<int64_t>(w->rank());
    if (m <= 0) return 0;
    const std::string w_zp = conv->inputs.size() > 3 ? conv->inputs[3] : std::string();
    if (!w_zp.empty()) {
      auto z = ConstValue(editor, w_zp);
      if (!z || z->dtype() != w->dtype() || z->rank() > 1 || (z->size() != 1 && z->size() != m)) return 0;
    }
    // Cast to float, read only by the Mul.
    ir::Node* cast = SoleReader(editor, conv->outputs[0]);
    if (!IsOnnxOp(cast, "Cast") || AttrInt(*cast, "to", 0) != static_cast<int64_t>(DataType::kFloat)) return 0;
    ir::Node* mul = SoleReader(editor, cast->outputs[0]);
    if (!IsOnnxOp(mul, "Mul", 7) || mul->inputs.size() != 2) return 0;
    const std::string& scale = OtherInput(*mul, cast->outputs[0]);
    if (scale.empty() || scale == cast->outputs[0]) return 0;
    // The Mul's other operand: Mul(s, w_scale) in either order, w_scale a float constant along
    // the channel axis.
    ir::Node* scale_mul = editor.Producer(scale);
    if (!IsOnnxOp(scale_mul, "Mul", 7) || scale_mul->inputs.size() != 2) return 0;
    const std::string& x_scale = dql->outputs[1];
    if (InputIndex(*scale_mul, x_scale) < 0) return 0;
    const std::string w_scale = OtherInput(*scale_mul, x_scale);
    if (w_scale.empty() || w_scale == x_scale) return 0;
    auto ws = ConstValue(editor, w_scale);
    if (!ws || ws->dtype() != DataType::kFloat || !PerChannelValues(editor, w_scale, rank, m)) return 0;
    // An optional bias Add of a float constant along the channel axis.
    ir::Node* add = SoleReader(editor, mul->outputs[0]);
    std::string bias;
    if (IsOnnxOp(add, "Add", 7) && add->inputs.size() == 2 && OtherInput(*add, mul->outputs[0]) != mul->outputs[0]) {
      const std::string& other = OtherInput(*add, mul->outputs[0]);
      auto b = ConstValue(editor, other);
      if (b && b->dtype() == DataType::kFloat && PerChannelValues(editor, other, rank, m)) bias = other;
    }
    if (!CanRun(ctx, "DynamicQuantizeConv", kOnyxDomain, 1)) return 0;
    std::string out = bias.empty() ? mul->outputs[0] : add->outputs[0];

    std::vector<ir::Node*> pattern = {conv, cast, mul};
    if (!bias.empty()) pattern.push_back(add);
    // A residual Add of another float value of the result's dims, reading the result only.
    std::string residual;
    ir::Node* residual_add = SoleReader(editor, out);
    if (IsOnnxOp(residual_add, "Add", 7) && residual_add->inputs.size() == 2 && residual_add->outputs.size() == 1) {
      const std::string& z = OtherInput(*residual_add, out);
      if (!z.empty() && z != out && SameFloatDims(types, z, out)) {
        residual = z;
        pattern.push_back(residual_add);
        out = residual_add->outputs[0];
      }
    }
    // A Relu or Clip reading the result only, or a SiLU (Sigmoid and Mul).
    ir::Node* act = SoleReader(editor, out);
    std::vector<float> bounds;
    std::string act_type;
    if (act != nullptr && act->inputs.size() >= 1 && act->inputs[0] == out && act->outputs.size() == 1 &&
        ActivationBounds(editor, *act, &bounds)) {
      pattern.push_back(act);
      act_type = act->op_type;
    } else if (ir::Node* gate = SiluGate(editor, out)) {
      act = SoleReader(editor, gate->outputs[0]);
      pattern.push_back(gate);
      pattern.push_back(act);
      act_type = "Silu";
    } else {
      act = nullptr;
    }
    // The scale Mul goes when only the pattern reads it, the DynamicQuantizeLinear when nothing
    // else reads its outputs.
    const bool scale_mul_private = OnlyReadBy(editor, scale_mul->outputs[0], {mul});
    if (scale_mul_private) pattern.push_back(scale_mul);
    const bool dql_private = OnlyReadBy(editor, dql->outputs[0], {conv}) &&
                             OnlyReadBy(editor, dql->outputs[2], {conv}) &&
                             (qdq::Unused(editor, x_scale) ||
                              (scale_mul_private && OnlyReadBy(editor, x_scale, {scale_mul})));
    if (dql_private) pattern.push_back(dql);
    const std::vector<ir::Attribute> attributes = conv->attributes;
    const std::string act_out = act != nullptr ? act->outputs[0] : std::string();
    std::vector<std::string> inputs = {dql->inputs[0], conv->inputs[1], w_scale, w_zp, bias};
    if (!residual.empty()) inputs.insert(inputs.end(), {std::string(), residual});
    RemoveAll(editor, pattern);
    ir::Node* fused = AddFusedNode(editor, "DynamicQuantizeConv", kOnyxDomain, 1, inputs,
                                   {act != nullptr ? act_out : out});
    fused->attributes = attributes;
    if (act != nullptr) {
      fused->attributes.push_back(StringAttr("activation", act_type));
      if (act_type == "Clip") fused->attributes.push_back(FloatsAttr("activation_params", bounds));
    }
    ++ctx.counts["DynamicQuantizeConv"];
    return 1;
  }
};

ONYX_REGISTER_PASS(QdqDynamicConvFusion, 154);

}  // namespace
}  // namespace onyx
