// Inference rules of the com.microsoft contrib ops that nn_rules.cc does not cover:
// GroupQueryAttention, RotaryEmbedding, EmbedLayerNormalization, MatMulNBits, the integer
// matmuls (DynamicQuantizeMatMul, MatMulIntegerToFloat, QGemm), TransposeMatMul, the QLinear*
// ops, and ONNX Runtime's ai.onnx-domain SimplifiedLayerNormalization.
#include <algorithm>

#include "ops/broadcast.h"
#include "ops/shape_inference.h"

namespace onyx {
namespace {

using Dims = std::vector<Dim>;

Dim Known(int64_t v) { return Dim{v, ""}; }

// A dim divided by an integer, when both are known.
Dim DivDim(const Dim& d, int64_t by) { return d.known() && by > 0 ? Known(d.value / by) : Dim{}; }

// One constant scalar int input (e.g. total_sequence_length), when known.
std::optional<int64_t> ConstantScalar(const InferenceContext& ctx, size_t i) {
  auto v = ctx.constant_ints(i);
  if (!v || v->size() != 1) return std::nullopt;
  return (*v)[0];
}

// numpy matmul shapes (1-D operands promoted), with optional transposes of the last two dims
// and transBatch (rows taken from dim 0).
std::optional<Dims> MatMulDims(const Dims* a, const Dims* b, bool trans_a, bool trans_b, bool tb_a, bool tb_b) {
  if (!a || !b || a->empty() || b->empty()) return std::nullopt;
  auto matrix = [](const Dims& d, bool trans, bool trans_batch, bool is_b, Dims& batch, Dim& rows, Dim& cols) {
    if (d.size() == 1) {
      rows = is_b ? d[0] : Known(1);
      cols = is_b ? Known(1) : d[0];
      return;
    }
    if (trans_batch && d.size() >= 3) {
      batch.assign(d.begin() + 1, d.end() - 1);
      rows = d[0];
    } else {
      batch.assign(d.begin(), d.end() - 2);
      rows = d[d.size() - 2];
    }
    cols = d.back();
    if (trans) std::swap(rows, cols);
  };
  Dims ab, bb;
  Dim m, k, k2, n;
  matrix(*a, trans_a, tb_a, false, ab, m, k);
  matrix(*b, trans_b, tb_b, true, bb, k2, n);
  auto batch = BroadcastDims({&ab, &bb});
  Dims out = batch ? *batch : Dims{};
  if (a->size() > 1) out.push_back(m);
  if (b->size() > 1) out.push_back(n);
  return out;
}

void GroupQueryAttentionRule(InferenceContext& ctx) {
  const Dims* q = ctx.input_dims(0);
  const DataType dt = ctx.input_dtype(0);
  const int64_t N = ctx.attr_int("num_heads", 0), Nkv = ctx.attr_int("kv_num_heads", 0);
  if (!q || q->size() != 3 || N <= 0 || Nkv <= 0) {
    for (size_t i = 0; i < std::min<size_t>(ctx.num_outputs(), 3); ++i) ctx.set_output(i, dt, std::nullopt);
    return;
  }
  const bool packed = !ctx.has_input(1);
  const Dim H = DivDim((*q)[2], packed ? N + 2 * Nkv : N);
  ctx.set_output(0, dt, Dims{(*q)[0], (*q)[1], H.known() && MulDims(H.value, N) ? Known(H.value * N) : Dim{}});
  // present: (B, N_kv, max(total_sequence_length, past length), H).
  Dim present_len;
  const Dims* past = ctx.has_input(3) ? ctx.input_dims(3) : nullptr;
  const auto total = ConstantScalar(ctx, 6);
  if (total && (!ctx.has_input(3) || (past && past->size() == 4 && (*past)[2].known())))
    present_len = Known(std::max(*total, ctx.has_input(3) ? (*past)[2].value : 0));
  for (size_t i = 1; i < std::min<size_t>(ctx.num_outputs(), 3); ++i)
    ctx.set_output(i, dt, Dims{(*q)[0], Known(Nkv), present_len, H});
  if (ctx.num_outputs() > 3) {
    Dim t = total ? Known(*total) : Dim{};
    ctx.set_output(3, dt, Dims{(*q)[0], Known(N), (*q)[1], t});
  }
}

void EmbedLayerNormRule(InferenceContext& ctx) {
  const Dims* ids = ctx.input_dims(0);
  const Dims* word = ctx.input_dims(2);
  const DataType dt = ctx.input_dtype(2);
  std::optional<Dims> out;
  if (ids && ids->size() == 2) out = Dims{(*ids)[0], (*ids)[1], word && word->size() == 2 ? (*word)[1] : Dim{}};
  ctx.set_output(0, dt, out);
  if (ctx.num_outputs() > 1)
    ctx.set_output(1, DataType::kInt32, ids && !ids->empty() ? std::optional<Dims>(Dims{(*ids)[0]}) : std::nullopt);
  if (ctx.num_outputs() > 2) ctx.set_output(2, dt, out);
}

void MatMulNBitsRule(InferenceContext& ctx) {
  const Dims* a = ctx.input_dims(0);
  std::optional<Dims> out;
  if (a && !a->empty()) {
    out = *a;
    out->back() = Known(ctx.attr_int("N", -1));
  }
  ctx.set_output(0, ctx.input_dtype(0), out);
}

void IntegerMatMulRule(InferenceContext& ctx) {
  // MatMulIntegerToFloat's output has its scales' type (input 2); DynamicQuantizeMatMul's is A's.
  const DataType dt = ctx.node().op_type == "MatMulIntegerToFloat" ? ctx.input_dtype(2) : ctx.input_dtype(0);
  ctx.set_output(0, dt, MatMulDims(ctx.input_dims(0), ctx.input_dims(1), false, false, false, false));
}

void TransposeMatMulRule(InferenceContext& ctx) {
  ctx.set_output(0, ctx.input_dtype(0),
                 MatMulDims(ctx.input_dims(0), ctx.input_dims(1), ctx.attr_int("transA", 0) != 0,
                            ctx.attr_int("transB", 0) != 0, ctx.attr_int("transBatchA", 0) != 0,
                            ctx.attr_int("transBatchB", 0) != 0));
}

void QGemmRule(InferenceContext& ctx) {
  const Dims* a = ctx.input_dims(0);
  const Dims* b = ctx.input_dims(3);
  const DataType dt = ctx.has_input(8) ? ctx.input_dtype(8) : DataType::kFloat;
  if (!a || !b || a->size() != 2 || b->size() != 2) return ctx.set_output(0, dt, Dims(2));
  const Dim m = ctx.attr_int("transA", 0) ? (*a)[1] : (*a)[0];
  const Dim n = ctx.attr_int("transB", 0) ? (*b)[0] : (*b)[1];
  ctx.set_output(0, dt, Dims{m, n});
}

void QLinearBinaryRule(InferenceContext& ctx) {
  ctx.set_output(0, ctx.input_dtype(0), BroadcastDims({ctx.input_dims(0), ctx.input_dims(3)}));
}

// Where's broadcast of condition, X and Y; X's type.
void QLinearWhereRule(InferenceContext& ctx) {
  ctx.set_output(0, ctx.input_dtype(1), BroadcastDims({ctx.input_dims(0), ctx.input_dims(1), ctx.input_dims(4)}));
}

// X's dims, the table's type.
void QLinearLookupRule(InferenceContext& ctx) {
  const Dims* x = ctx.input_dims(0);
  ctx.set_output(0, ctx.input_dtype(1), x ? std::optional<Dims>(*x) : std::nullopt);
}

void QLinearConcatRule(InferenceContext& ctx) {
  const DataType dt = ctx.input_dtype(1);
  const Dims* first = ctx.input_dims(2);
  if (!first || first->empty()) return ctx.set_output(0, dt, std::nullopt);
  const int64_t axis = NormalizeAxis(ctx.attr_int("axis", 0), static_cast<int64_t>(first->size()));
  Dims out = *first;
  int64_t total = 0;
  for (size_t i = 2; i < ctx.num_inputs(); i += 3) {
    const Dims* d = ctx.input_dims(i);
    if (!d || d->size() != first->size() || !(*d)[axis].known() || __builtin_add_overflow(total, (*d)[axis].value, &total)) {
      total = -1;
      break;
    }
  }
  out[axis] = total >= 0 ? Known(total) : Dim{};
  ctx.set_output(0, dt, out);
}

// Spatial dims of a pooled (N, C, spatial...) or channels_last (N, spatial..., C) tensor.
void QLinearPoolRule(InferenceContext& ctx, bool global) {
  const Dims* x = ctx.input_dims(0);
  const DataType dt = ctx.input_dtype(0);
  if (!x || x->size() < 3) return ctx.set_output(0, dt, std::nullopt);
  const bool channels_last = ctx.attr_int("channels_last", 0) != 0;
  const size_t first = channels_last ? 1 : 2, spatial = x->size() - 2;
  Dims out = *x;
  const auto kernel = ctx.attr_ints("kernel_shape");
  auto strides = ctx.attr_ints("strides"), pads = ctx.attr_ints("pads");
  strides.resize(spatial, 1);
  pads.resize(2 * spatial, 0);
  const ir::Attribute* ap = ctx.node().FindAttribute("auto_pad");
  const std::string auto_pad = ap ? ap->s : "NOTSET";
  const bool ceil_mode = ctx.attr_int("ceil_mode", 0) != 0;
  for (size_t i = 0; i < spatial; ++i) {
    Dim& d = out[first + i];
    if (global) {
      d = Known(1);
      continue;
    }
    const int64_t k = i < kernel.size() ? kernel[i] : -1, s = strides[i];
    if (!d.known() || k <= 0 || s <= 0) {
      d = Dim{};
      continue;
    }
    const int64_t in = d.value;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      d = Known((in + s - 1) / s);
    } else {
      const int64_t pb = auto_pad == "VALID" ? 0 : pads[i], pe = auto_pad == "VALID" ? 0 : pads[i + spatial];
      const int64_t span = in + pb + pe - k;
      if (span < 0) {
        d = Dim{};
        continue;
      }
      int64_t o = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
      if (ceil_mode && (o - 1) * s >= in + pb) --o;
      d = Known(o);
    }
  }
  ctx.set_output(0, dt, out);
}

// SimplifiedLayerNormalization (ai.onnx, ONNX Runtime's contrib op): Y like X, InvStdDev float
// with the normalized dims set to 1.
void SimplifiedLayerNormRule(InferenceContext& ctx) {
  SameAsInput0(ctx);
  if (ctx.num_outputs() < 2) return;
  const Dims* x = ctx.input_dims(0);
  if (!x || x->empty()) return ctx.set_output(1, DataType::kFloat, std::nullopt);
  const int64_t axis = NormalizeAxis(ctx.attr_int("axis", -1), static_cast<int64_t>(x->size()));
  Dims stat = *x;
  for (size_t i = static_cast<size_t>(axis); i < stat.size(); ++i) stat[i] = Known(1);
  ctx.set_output(1, DataType::kFloat, stat);
}

struct Registrations {
  Registrations() {
    const char* ms = "com.microsoft";
    RegisterInferenceRule(ms, "GroupQueryAttention", GroupQueryAttentionRule);
    RegisterInferenceRule(ms, "RotaryEmbedding", SameAsInput0);
    RegisterInferenceRule(ms, "EmbedLayerNormalization", EmbedLayerNormRule);
    RegisterInferenceRule(ms, "MatMulNBits", MatMulNBitsRule);
    RegisterInferenceRule(ms, "DynamicQuantizeMatMul", IntegerMatMulRule);
    RegisterInferenceRule(ms, "MatMulIntegerToFloat", IntegerMatMulRule);
    RegisterInferenceRule(ms, "TransposeMatMul", TransposeMatMulRule);
    RegisterInferenceRule(ms, "QGemm", QGemmRule);
    RegisterInferenceRule(ms, "QLinearAdd", QLinearBinaryRule);
    RegisterInferenceRule(ms, "QLinearMul", QLinearBinaryRule);
    for (const char* op : {"QLinearSigmoid", "QLinearLeakyRelu", "QLinearSoftmax"})
      RegisterInferenceRule(ms, op, SameAsInput0);
    RegisterInferenceRule(ms, "QLinearConcat", QLinearConcatRule);
    RegisterInferenceRule(ms, "QLinearWhere", QLinearWhereRule);
    RegisterInferenceRule("com.onyx", "QLinearSiLU", SameAsInput0);  // QLinearSigmoid then QLinearMul
    RegisterInferenceRule("com.onyx", "QLinearLookup", QLinearLookupRule);
    RegisterInferenceRule(ms, "QLinearAveragePool", [](InferenceContext& ctx) { QLinearPoolRule(ctx, false); });
    RegisterInferenceRule(ms, "QLinearGlobalAveragePool", [](InferenceContext& ctx) { QLinearPoolRule(ctx, true); });
    RegisterInferenceRule("", "SimplifiedLayerNormalization", SimplifiedLayerNormRule);
  }
} registrations;

}  // namespace
}  // namespace onyx
