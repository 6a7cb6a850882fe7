// QDQ node groups around the matrix ops become their integer forms (extended), with ONNX
// Runtime's QDQ selector conditions:
//   DQ(x), DQ(w) [, DQ(int32 bias)] -> Conv -> Q          => QLinearConv
//   DQ(a), DQ(b) -> MatMul -> Q                            => QLinearMatMul
//   DQ(a), DQ(b) -> MatMul (float result, no Q)            => com.microsoft.MatMulIntegerToFloat
//   DQ(a), DQ(b) [, DQ(int32 bias)] -> Gemm [-> Q]         => com.microsoft.QGemm (float Y without Q)
// Activations (x, a, y) are per-tensor uint8/int8 with the same type in and out; weights int8
// (or uint8 under uint8 activations), per tensor or per output channel (Conv: axis 0; MatMul:
// b's last axis; Gemm: B's N axis). A bias must be the DQ of an int32 constant with zero point 0
// and scale x_scale * w_scale (what QLinearConv / QGemm assume; ORT trusts the quantizer there).
// Anything else leaves the group as it is.
#include <cmath>

#include "optimizer/fusion_util.h"
#include "optimizer/pass.h"
#include "optimizer/passes/qdq_selectors.h"
#include "optimizer/pattern_util.h"

namespace onyx {
namespace {

using namespace fusion;
using qdq::QuantParams;

// An activation's parameters: 8-bit per tensor, int8 only where allowed.
bool ActivationOk(const QuantParams& p) {
  return p.per_tensor && (p.type == DataType::kUInt8 || (p.type == DataType::kInt8 && qdq::kInt8ActivationsAllowed));
}

// A weight's parameters: per tensor, or `channels` scales along `axis` of a `rank`-D weight.
bool WeightOk(const QuantParams& w, const QuantParams& x, int64_t rank, int64_t axis, int64_t channels) {
  if (x.type == DataType::kInt8 && w.type != DataType::kInt8) return false;  // s8 activations need s8 weights
  if (w.per_tensor) return true;
  if (rank <= 0 || channels <= 0) return false;
  const int64_t a = w.axis < 0 ? w.axis + rank : w.axis;
  return a == axis && w.scale_size == channels;
}

// The int32 bias DQ: constant int32 input, zero points 0, scale[m] == x_scale * w_scale[m]
// (within float rounding) for each of `channels` outputs.
ir::Node* BiasDequantize(GraphEditor& editor, const std::string& value, const QuantParams& x, const QuantParams& w,
                         int64_t channels) {
  ir::Node* dq = editor.Producer(value);
  if (!IsOnnxOp(dq, "DequantizeLinear", 10) || dq->inputs.size() < 2 || dq->outputs.size() != 1) return nullptr;
  if (AttrInt(*dq, "block_size", 0) != 0 || ElemType(editor, dq->inputs[0]) != DataType::kInt32) return nullptr;
  auto bias_scale = ConstDoubles(editor, dq->inputs[1]);
  auto bias_scale_t = ConstValue(editor, dq->inputs[1]);
  auto xs = ConstDoubles(editor, x.scale);
  auto ws = ConstDoubles(editor, w.scale);
  if (!bias_scale || !bias_scale_t || bias_scale_t->dtype() != DataType::kFloat || !xs || !ws) return nullptr;
  if (bias_scale->size() != 1 && static_cast<int64_t>(bias_scale->size()) != channels) return nullptr;
  if (bias_scale->size() != 1 && AttrInt(*dq, "axis", 1) != 0 && AttrInt(*dq, "axis", 1) != -1) return nullptr;
  for (int64_t m = 0; m < std::max<int64_t>(channels, 1); ++m) {
    const double expected = static_cast<double>(static_cast<float>((*xs)[0]) *
                                                static_cast<float>((*ws)[ws->size() == 1 ? 0 : m]));
    const double got = (*bias_scale)[bias_scale->size() == 1 ? 0 : m];
    if (std::abs(got - expected) > 1e-6 * std::abs(expected)) return nullptr;
  }
  if (dq->inputs.size() == 3 && !dq->inputs[2].empty()) {
    auto zp = ConstDoubles(editor, dq->inputs[2]);
    if (!zp) return nullptr;
    for (double z : *zp)
      if (z != 0) return nullptr;
  }
  return dq;
}

// Dims of a value (a constant's without type inference), or empty.
std::vector<Dim> DimsOr(GraphEditor& editor, const std::string& value) {
  if (const Tensor* t = editor.Constant(value)) {
    std::vector<Dim> dims;
    for (size_t i = 0; i < t->rank(); ++i) dims.push_back(Dim{t->dim(i), ""});
    return dims;
  }
  const auto* d = editor.DimsOf(value);
  return d == nullptr ? std::vector<Dim>{} : *d;
}

int64_t KnownDim(const std::vector<Dim>& dims, int64_t axis) {
  if (axis < 0 || axis >= static_cast<int64_t>(dims.size()) || !dims[axis].known()) return -1;
  return dims[axis].value;
}

class QdqConvMatMulFusion final : public Pass {
 public:
  std::string name() const override { return "QdqConvMatMulFusion"; }
  OptLevel level() const override { return OptLevel::kExtended; }
  std::vector<std::string> providers() const override { return {"CPU"}; }

  int Apply(PassContext& ctx) override {
    if (!qdq::HasQdqNodes(ctx.editor)) return 0;
    int rewrites = 0;
    for (ir::Node* node : ctx.editor.Nodes()) {
      if (!qdq::Live(ctx.editor, node)) continue;  // removed by an earlier rewrite of this round
      if (IsOnnxOp(node, "Conv", 10)) rewrites += FuseConv(ctx, node);
      else if (IsOnnxOp(node, "MatMul", 10)) rewrites += FuseMatMul(ctx, node);
      else if (IsOnnxOp(node, "Gemm", 10)) rewrites += FuseGemm(ctx, node);
    }
    return rewrites;
  }

 private:
  static int FuseConv(PassContext& ctx, ir::Node* conv) {
    GraphEditor& editor = ctx.editor;
    if (conv->inputs.size() < 2 || conv->inputs.size() > 3 || conv->outputs.size() != 1) return 0;
    QuantParams x, w, y;
    ir::Node* dq_x = qdq::DequantizeOf(editor, conv->inputs[0], &x);
    ir::Node* dq_w = qdq::DequantizeOf(editor, conv->inputs[1], &w);
    if (dq_x == nullptr || dq_w == nullptr || !ActivationOk(x)) return 0;
    const std::vector<Dim> w_dims = DimsOr(editor, dq_w->inputs[0]);
    const int64_t channels = KnownDim(w_dims, 0);
    if (!WeightOk(w, x, static_cast<int64_t>(w_dims.size()), 0, channels)) return 0;
    ir::Node* dq_b = nullptr;
    const bool has_bias = conv->inputs.size() == 3 && !conv->inputs[2].empty();
    if (has_bias && (dq_b = BiasDequantize(editor, conv->inputs[2], x, w, channels)) == nullptr) return 0;
    ir::Node* q = qdq::SoleQuantizeReader(editor, conv->outputs[0], &y);
    if (q == nullptr || !ActivationOk(y) || y.type != x.type) return 0;
    if (!CanRun(ctx, "QLinearConv", "", conv->opset)) return 0;

    std::vector<std::string> inputs = {dq_x->inputs[0], x.scale, qdq::ZeroPointOrZero(editor, x),
                                       dq_w->inputs[0], w.scale, qdq::ZeroPointOrZero(editor, w),
                                       y.scale,         qdq::ZeroPointOrZero(editor, y)};
    if (dq_b != nullptr) inputs.push_back(dq_b->inputs[0]);
    const std::string out = q->outputs[0];
    const ir::Node original = *conv;
    RemoveAll(editor, {conv, q});
    qdq::RemoveUnusedDequantizes(editor, {dq_x, dq_w, dq_b});
    ir::Node* fused = AddFusedNode(editor, "QLinearConv", "", original.opset, inputs, {out});
    qdq::CopyAttributes(original, fused, {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"});
    ++ctx.counts["QLinearConv"];
    return 1;
  }

  static int FuseMatMul(PassContext& ctx, ir::Node* matmul) {
    GraphEditor& editor = ctx.editor;
    if (matmul->inputs.size() != 2 || matmul->outputs.size() != 1) return 0;
    QuantParams a, b, y;
    ir::Node* dq_a = qdq::DequantizeOf(editor, matmul->inputs[0], &a);
    ir::Node* dq_b = qdq::DequantizeOf(editor, matmul->inputs[1], &b);
    if (dq_a == nullptr || dq_b == nullptr || !ActivationOk(a)) return 0;
    // b's dims only for per-column scales: an activation b's dims (attention's two products)
    // need type inference, which reruns over the whole graph after each rewrite (a third of
    // BERT-base int8's optimization).
    const std::vector<Dim> b_dims = b.per_tensor ? std::vector<Dim>{} : DimsOr(editor, dq_b->inputs[0]);
    // Per-column b scales only for a 2-D b (axis 1, or -1).
    if (!WeightOk(b, a, static_cast<int64_t>(b_dims.size()), 1, b_dims.size() == 2 ? KnownDim(b_dims, 1) : -1))
      return 0;
    // A Q reading the result: QLinearMatMul, when it is the result's only reader. No Q reading
    // it at all: MatMulIntegerToFloat. A Q among other readers: left alone (as ORT).
    bool q_reader = false;
    for (const ir::Node* r : editor.Consumers(matmul->outputs[0])) q_reader = q_reader || IsOnnxOp(r, "QuantizeLinear");
    if (q_reader) {
      ir::Node* q = qdq::SoleQuantizeReader(editor, matmul->outputs[0], &y);
      if (q == nullptr || !ActivationOk(y) || y.type != a.type) return 0;
      if (!CanRun(ctx, "QLinearMatMul", "", matmul->opset)) return 0;
      const std::vector<std::string> inputs = {dq_a->inputs[0], a.scale, qdq::ZeroPointOrZero(editor, a),
                                               dq_b->inputs[0], b.scale, qdq::ZeroPointOrZero(editor, b),
                                               y.scale,         qdq::ZeroPointOrZero(editor, y)};
      const std::string out = q->outputs[0];
      const int opset = matmul->opset;
      RemoveAll(editor, {matmul, q});
      qdq::RemoveUnusedDequantizes(editor, {dq_a, dq_b});
      AddFusedNode(editor, "QLinearMatMul", "", opset, inputs, {out});
      ++ctx.counts["QLinearMatMul"];
      return 1;
    }
    if (!CanRun(ctx, "MatMulIntegerToFloat", kMsDomain, 1)) return 0;
    const std::vector<std::string> inputs = {dq_a->inputs[0], dq_b->inputs[0], a.scale, b.scale,
                                             a.zero_point,    b.zero_point};
    const std::string out = matmul->outputs[0];
    RemoveAll(editor, {matmul});
    qdq::RemoveUnusedDequantizes(editor, {dq_a, dq_b});
    AddFusedNode(editor, "MatMulIntegerToFloat", kMsDomain, 1, inputs, {out});
    ++ctx.counts["MatMulIntegerToFloat"];
    return 1;
  }

  static int FuseGemm(PassContext& ctx, ir::Node* gemm) {
    GraphEditor& editor = ctx.editor;
    if (gemm->inputs.size() < 2 || gemm->inputs.size() > 3 || gemm->outputs.size() != 1) return 0;
    QuantParams a, b, y;
    ir::Node* dq_a = qdq::DequantizeOf(editor, gemm->inputs[0], &a);
    ir::Node* dq_b = qdq::DequantizeOf(editor, gemm->inputs[1], &b);
    // Gemm's selector has no int8-activation switch in ORT: only "int8 A needs int8 B".
    if (dq_a == nullptr || dq_b == nullptr || !a.per_tensor) return 0;
    const int64_t trans_b = AttrInt(*gemm, "transB", 0);
    const std::vector<Dim> b_dims = b.per_tensor ? std::vector<Dim>{} : DimsOr(editor, dq_b->inputs[0]);
    const int64_t n_axis = trans_b != 0 ? 0 : 1;
    if (!WeightOk(b, a, static_cast<int64_t>(b_dims.size()), n_axis, b_dims.size() == 2 ? KnownDim(b_dims, n_axis) : -1))
      return 0;
    ir::Node* dq_c = nullptr;
    if (gemm->inputs.size() == 3 && !gemm->inputs[2].empty()) {
      // QGemm adds C before scaling by alpha: only beta == 1 (ORT) and alpha == 1 (so alpha
      // does not scale the bias) keep the float result.
      if (AttrFloat(*gemm, "beta", 1.0f) != 1.0f || AttrFloat(*gemm, "alpha", 1.0f) != 1.0f) return 0;
      dq_c = BiasDequantize(editor, gemm->inputs[2], a, b, b.per_tensor ? 1 : b.scale_size);
      if (dq_c == nullptr) return 0;
    }
    bool q_reader = false;
    for (const ir::Node* r : editor.Consumers(gemm->outputs[0])) q_reader = q_reader || IsOnnxOp(r, "QuantizeLinear");
    ir::Node* q = nullptr;
    if (q_reader) {
      q = qdq::SoleQuantizeReader(editor, gemm->outputs[0], &y);
      if (q == nullptr || !y.per_tensor || y.type != a.type) return 0;
    }
    if (!CanRun(ctx, "QGemm", kMsDomain, 1)) return 0;
    std::vector<std::string> inputs = {dq_a->inputs[0], a.scale, qdq::ZeroPointOrZero(editor, a),
                                       dq_b->inputs[0], b.scale, qdq::ZeroPointOrZero(editor, b),
                                       dq_c != nullptr ? dq_c->inputs[0] : std::string()};
    if (q != nullptr) {
      inputs.push_back(y.scale);
      inputs.push_back(qdq::ZeroPointOrZero(editor, y));
    }
    const std::string out = q != nullptr ? q->outputs[0] : gemm->outputs[0];
    const ir::Node original = *gemm;
    std::vector<ir::Node*> removed = {gemm};
    if (q != nullptr) removed.push_back(q);
    RemoveAll(editor, removed);
    qdq::RemoveUnusedDequantizes(editor, {dq_a, dq_b, dq_c});
    ir::Node* fused = AddFusedNode(editor, "QGemm", kMsDomain, 1, inputs, {out});
    qdq::CopyAttributes(original, fused, {"alpha", "transA", "transB"});
    ++ctx.counts[q != nullptr ? "QGemm" : "QGemm (float output)"];
    return 1;
  }
};

ONYX_REGISTER_PASS(QdqConvMatMulFusion, 150);

}  // namespace
}  // namespace onyx
