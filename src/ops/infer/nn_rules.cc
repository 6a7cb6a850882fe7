// Inference rules of linear-algebra and NN ops: MatMul, Gemm, Conv, pools, reductions,
// ArgMax/ArgMin, TopK, Resize, the com.microsoft fused forms Onyx's optimizer creates and the
// com.onyx channel-blocked (NCHWc) convolution ops.
#include <algorithm>
#include <cmath>

#include "ops/broadcast.h"
#include "ops/shape_inference.h"

namespace onyx {
namespace {

using Dims = std::vector<Dim>;

// Y of A times B; its type is dt (the integer products' int32 or zero point's type), else A's.
void MatMulLike(InferenceContext& ctx, bool trans_a, bool trans_b, size_t b_index = 1,
                DataType dt = DataType::kUndefined) {
  const Dims* a = ctx.input_dims(0);
  const Dims* b = ctx.input_dims(b_index);
  if (dt == DataType::kUndefined) dt = ctx.input_dtype(0);
  if (!a || !b || a->empty() || b->empty()) return ctx.set_output(0, dt, std::nullopt);
  Dims as = *a, bs = *b;
  const bool a_vec = as.size() == 1, b_vec = bs.size() == 1;
  if (a_vec) as.insert(as.begin(), Dim{1, ""});
  if (b_vec) bs.push_back(Dim{1, ""});
  if (trans_a) std::swap(as[as.size() - 1], as[as.size() - 2]);
  if (trans_b) std::swap(bs[bs.size() - 1], bs[bs.size() - 2]);
  const Dims a_batch(as.begin(), as.end() - 2), b_batch(bs.begin(), bs.end() - 2);
  auto batch = BroadcastDims({&a_batch, &b_batch});
  Dims out = batch ? *batch : Dims{};
  if (!a_vec) out.push_back(as[as.size() - 2]);
  if (!b_vec) out.push_back(bs.back());
  ctx.set_output(0, dt, out);
}

void MatMulRule(InferenceContext& ctx) { MatMulLike(ctx, false, false); }

void FusedMatMulRule(InferenceContext& ctx) {
  MatMulLike(ctx, ctx.attr_int("transA", 0) != 0, ctx.attr_int("transB", 0) != 0);
}

// MatMulInteger: int32 products. QLinearMatMul: B is input 3, Y has y_zero_point's type (input 7).
void MatMulIntegerRule(InferenceContext& ctx) { MatMulLike(ctx, false, false, 1, DataType::kInt32); }
void QLinearMatMulRule(InferenceContext& ctx) { MatMulLike(ctx, false, false, 3, ctx.input_dtype(7)); }

void GemmRule(InferenceContext& ctx) {
  const Dims* a = ctx.input_dims(0);
  const Dims* b = ctx.input_dims(1);
  if (!a || !b || a->size() != 2 || b->size() != 2) return ctx.set_output(0, ctx.input_dtype(0), Dims(2));
  const Dim m = ctx.attr_int("transA", 0) ? (*a)[1] : (*a)[0];
  const Dim n = ctx.attr_int("transB", 0) ? (*b)[0] : (*b)[1];
  ctx.set_output(0, ctx.input_dtype(0), Dims{m, n});
}

// Output spatial size of a sliding window, or unknown.
Dim WindowOut(const Dim& in, int64_t kernel, int64_t stride, int64_t pad_begin, int64_t pad_end, int64_t dilation,
              bool ceil_mode, const std::string& auto_pad) {
  if (!in.known() || kernel <= 0 || stride <= 0) return Dim{};
  // In 128 bits, so extreme attributes cannot overflow; a result beyond int64 is unknown.
  using Wide = __int128;
  const auto result = [](Wide v) { return v >= 0 && v <= INT64_MAX ? Dim{static_cast<int64_t>(v), ""} : Dim{}; };
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") return result((Wide{in.value} + stride - 1) / stride);
  const Wide effective = (Wide{kernel} - 1) * dilation + 1;
  const Wide span = Wide{in.value} + pad_begin + pad_end - effective;
  if (span < 0) return Dim{};
  if (auto_pad == "VALID") return result((Wide{in.value} - effective) / stride + 1);
  Wide out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  // A window that would start in the end padding is dropped (ceil mode).
  if (ceil_mode && (out - 1) * stride >= Wide{in.value} + pad_begin) --out;
  return result(out);
}

std::string AutoPad(const InferenceContext& ctx) {
  const ir::Attribute* a = ctx.node().FindAttribute("auto_pad");
  return a ? a->s : "NOTSET";
}

// Conv's or a pool's output dims for input dims `x` (rank >= 3).
Dims ConvLikeDims(InferenceContext& ctx, const Dims* x, bool pool, size_t w_index = 1) {
  const size_t spatial = x->size() - 2;
  std::vector<int64_t> kernel = ctx.attr_ints("kernel_shape");
  const Dims* w = pool ? nullptr : ctx.input_dims(w_index);
  if (kernel.empty() && w && w->size() == x->size())
    for (size_t i = 2; i < w->size(); ++i) kernel.push_back((*w)[i].known() ? (*w)[i].value : -1);
  auto strides = ctx.attr_ints("strides"), dilations = ctx.attr_ints("dilations"), pads = ctx.attr_ints("pads");
  strides.resize(spatial, 1);
  dilations.resize(spatial, 1);
  pads.resize(2 * spatial, 0);
  Dims out;
  out.push_back((*x)[0]);
  out.push_back(pool ? (*x)[1] : (w && !w->empty() ? (*w)[0] : Dim{}));
  const bool ceil_mode = ctx.attr_int("ceil_mode", 0) != 0;
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t k = i < kernel.size() ? kernel[i] : -1;
    out.push_back(WindowOut((*x)[2 + i], k, strides[i], pads[i], pads[i + spatial], dilations[i], ceil_mode,
                            AutoPad(ctx)));
  }
  return out;
}

void ConvLike(InferenceContext& ctx, bool pool) {
  const Dims* x = ctx.input_dims(0);
  if (!x || x->size() < 3) return ctx.set_output(0, ctx.input_dtype(0), std::nullopt);
  const Dims out = ConvLikeDims(ctx, x, pool);
  ctx.set_output(0, ctx.input_dtype(0), out);
  if (pool && ctx.num_outputs() > 1) ctx.set_output(1, DataType::kInt64, out);
}

void ConvRule(InferenceContext& ctx) { ConvLike(ctx, false); }

// ConvInteger: Conv's dims, int32.
void ConvIntegerRule(InferenceContext& ctx) {
  const Dims* x = ctx.input_dims(0);
  ctx.set_output(0, DataType::kInt32, x && x->size() >= 3 ? std::optional<Dims>(ConvLikeDims(ctx, x, false)) : std::nullopt);
}

// DynamicQuantizeLinear: uint8 codes of X's dims, a float scale and a uint8 zero point (scalars).
void DynamicQuantizeLinearRule(InferenceContext& ctx) {
  const Dims* x = ctx.input_dims(0);
  ctx.set_output(0, DataType::kUInt8, x ? std::optional<Dims>(*x) : std::nullopt);
  if (ctx.num_outputs() > 1) ctx.set_output(1, DataType::kFloat, Dims{});
  if (ctx.num_outputs() > 2) ctx.set_output(2, DataType::kUInt8, Dims{});
}
// com.onyx DynamicQuantizeConv: Y (float, X float or its uint8 codes) as Conv's, its optional
// Y_range output float [2] and Y_codes output uint8 of Y's dims.
void DynamicQuantizeConvRule(InferenceContext& ctx) {
  const Dims* x = ctx.input_dims(0);
  std::optional<Dims> out;
  if (x && x->size() >= 3) out = ConvLikeDims(ctx, x, false);
  ctx.set_output(0, DataType::kFloat, out);
  if (ctx.num_outputs() > 1) ctx.set_output(1, DataType::kFloat, Dims{Dim{2, ""}});
  if (ctx.num_outputs() > 2) ctx.set_output(2, DataType::kUInt8, out);
}

// QuantizeLinear: X's dims, the zero point's type (else output_dtype, else uint8).
// DequantizeLinear: X's dims, the scale's type. Both keep the shape at every axis / block size.
void QuantizeLinearRule(InferenceContext& ctx) {
  DataType dt = ctx.has_input(2) ? ctx.input_dtype(2) : DataType::kUndefined;
  if (dt == DataType::kUndefined) {
    const int64_t attr = ctx.attr_int("output_dtype", 0);
    dt = attr == 0 ? DataType::kUInt8 : attr > 0 && attr <= kMaxDataType ? static_cast<DataType>(attr) : DataType::kUndefined;
  }
  const Dims* x = ctx.input_dims(0);
  ctx.set_output(0, dt, x ? std::optional<Dims>(*x) : std::nullopt);
}

void DequantizeLinearRule(InferenceContext& ctx) {
  const Dims* x = ctx.input_dims(0);
  ctx.set_output(0, ctx.input_dtype(1), x ? std::optional<Dims>(*x) : std::nullopt);
}

// QLinearConv and com.microsoft.QLinearConv: W is input 3, Y has y_zero_point's type; channels_last: X and Y
// are [N, spatial..., C].
void MsQLinearConvRule(InferenceContext& ctx) {
  const Dims* x = ctx.input_dims(0);
  const DataType dt = ctx.input_dtype(7);
  if (!x || x->size() < 3) return ctx.set_output(0, dt, std::nullopt);
  const bool channels_last = ctx.attr_int("channels_last", 0) != 0;
  Dims plain = *x;
  if (channels_last) std::rotate(plain.begin() + 1, plain.end() - 1, plain.end());
  Dims out = ConvLikeDims(ctx, &plain, false, 3);
  if (channels_last) std::rotate(out.begin() + 1, out.begin() + 2, out.end());
  ctx.set_output(0, dt, out);
}
void PoolRule(InferenceContext& ctx) { ConvLike(ctx, true); }

// com.onyx channel-blocked ops (NCHWc): [N, ceil(C / block), spatial..., block].
Dim BlocksOf(const Dim& channels, const Dim& block) {
  if (!channels.known() || !block.known() || block.value <= 0) return Dim{};
  return Dim{channels.value / block.value + (channels.value % block.value != 0), ""};
}

void ReorderToNchwcRule(InferenceContext& ctx) {
  const Dims* x = ctx.input_dims(0);
  if (!x || x->size() < 3) return ctx.set_output(0, DataType::kFloat, std::nullopt);
  const Dim block{ctx.attr_int("block", 0), ""};
  Dims out = {(*x)[0], BlocksOf((*x)[1], block)};
  out.insert(out.end(), x->begin() + 2, x->end());
  out.push_back(block);
  ctx.set_output(0, DataType::kFloat, out);
}

void ReorderFromNchwcRule(InferenceContext& ctx) {
  const Dims* x = ctx.input_dims(0);
  if (!x || x->size() < 4) return ctx.set_output(0, DataType::kFloat, std::nullopt);
  Dims out = {(*x)[0], Dim{ctx.attr_int("channels", -1), ""}};
  out.insert(out.end(), x->begin() + 2, x->end() - 1);
  ctx.set_output(0, DataType::kFloat, out);
}

// NchwcConv: Conv's window over the plain view of X, then blocked like X (or by the block
// attribute when X is plain).
void NchwcConvRule(InferenceContext& ctx) {
  const Dims* x = ctx.input_dims(0);
  const bool plain_input = ctx.attr_int("plain_input", 0) != 0;
  if (!x || x->size() < (plain_input ? 3u : 4u)) return ctx.set_output(0, DataType::kFloat, std::nullopt);
  const Dim block = plain_input ? Dim{ctx.attr_int("block", 0), ""} : x->back();
  const Dims plain(x->begin(), x->end() - (plain_input ? 0 : 1));
  Dims out = ConvLikeDims(ctx, &plain, false);
  out[1] = BlocksOf(out[1], block);
  out.push_back(block);
  ctx.set_output(0, DataType::kFloat, out);
}

// NchwcDepthwisePointwiseConv: the depthwise's window (W_dw, input 1) over the plain view of
// X, then W's (input 3) channels, blocked like X.
void NchwcDepthwisePointwiseConvRule(InferenceContext& ctx) {
  const Dims* x = ctx.input_dims(0);
  if (!x || x->size() != 5) return ctx.set_output(0, DataType::kFloat, std::nullopt);
  const Dims plain(x->begin(), x->end() - 1);
  Dims out = ConvLikeDims(ctx, &plain, false);
  const Dims* w = ctx.input_dims(3);
  out[1] = BlocksOf(w && !w->empty() ? (*w)[0] : Dim{}, x->back());
  out.push_back(x->back());
  ctx.set_output(0, DataType::kFloat, out);
}

// NchwcMaxPool / NchwcAveragePool: the pool's window over [N, C / B, H, W], then B.
void NchwcPoolRule(InferenceContext& ctx) {
  const Dims* x = ctx.input_dims(0);
  if (!x || x->size() < 4) return ctx.set_output(0, DataType::kFloat, std::nullopt);
  const Dims plain(x->begin(), x->end() - 1);
  Dims out = ConvLikeDims(ctx, &plain, true);
  out.push_back(x->back());
  ctx.set_output(0, DataType::kFloat, out);
}

// NchwcGlobalAveragePool / NchwcGlobalMaxPool: spatial dims 1, the block kept.
void NchwcGlobalPoolRule(InferenceContext& ctx) {
  const Dims* x = ctx.input_dims(0);
  if (!x || x->size() < 4) return ctx.set_output(0, DataType::kFloat, std::nullopt);
  Dims out = *x;
  for (size_t i = 2; i + 1 < out.size(); ++i) out[i] = Dim{1, ""};
  ctx.set_output(0, DataType::kFloat, out);
}

// NchwcUpsample: H and W times scale_h and scale_w (a scale of 1 keeps the dim).
void NchwcUpsampleRule(InferenceContext& ctx) {
  const Dims* x = ctx.input_dims(0);
  if (!x || x->size() != 5) return ctx.set_output(0, DataType::kFloat, std::nullopt);
  Dims out = *x;
  const int64_t scales[2] = {ctx.attr_int("scale_h", 1), ctx.attr_int("scale_w", 1)};
  for (size_t i = 0; i < 2; ++i)
    if (scales[i] != 1) out[2 + i] = out[2 + i].known() ? Dim{out[2 + i].value * scales[i], ""} : Dim{};
  ctx.set_output(0, DataType::kFloat, out);
}

// Resize: constant sizes, else floor(dim * scale) for constant scales (a scale of 1 keeps the
// dim, symbol included); the rank of X otherwise. Opset 10 reads scales as input 1.
void ResizeRule(InferenceContext& ctx) {
  const Dims* x = ctx.input_dims(0);
  const DataType dtype = ctx.input_dtype(0);
  if (!x) return ctx.set_output(0, dtype, std::nullopt);
  const size_t r = x->size();
  Dims out(r);
  auto string_attr = [&](const char* name, const char* fallback) {
    const ir::Attribute* a = ctx.node().FindAttribute(name);
    return a ? a->s : std::string(fallback);
  };
  const bool plain = !ctx.has_attr("axes") && string_attr("keep_aspect_ratio_policy", "stretch") == "stretch" &&
                     string_attr("coordinate_transformation_mode", "half_pixel") != "tf_crop_and_resize";
  const size_t scales_at = ctx.opset() < 11 ? 1 : 2;
  if (plain && ctx.opset() >= 11 && ctx.has_input(3)) {
    if (auto sizes = ctx.constant_ints(3); sizes && sizes->size() == r)
      for (size_t i = 0; i < r; ++i) out[i] = Dim{(*sizes)[i], ""};
  } else if (plain && ctx.has_input(scales_at)) {
    const Tensor* scales = ctx.constant(scales_at);
    if (scales != nullptr && scales->dtype() == DataType::kFloat && static_cast<size_t>(scales->size()) == r)
      for (size_t i = 0; i < r; ++i) {
        const double scale = scales->data<float>()[i];
        if (scale == 1.0) out[i] = (*x)[i];
        else if ((*x)[i].known() && scale > 0 && (*x)[i].value * scale < 9.2e18)  // else beyond int64: unknown
          out[i] = Dim{static_cast<int64_t>(std::floor((*x)[i].value * scale)), ""};
      }
  }
  ctx.set_output(0, dtype, out);
}

void GlobalPoolRule(InferenceContext& ctx) {
  const Dims* x = ctx.input_dims(0);
  if (!x) return ctx.set_output(0, ctx.input_dtype(0), std::nullopt);
  Dims out = *x;
  for (size_t i = 2; i < out.size(); ++i) out[i] = Dim{1, ""};
  ctx.set_output(0, ctx.input_dtype(0), out);
}

void Reduce(InferenceContext& ctx, DataType dtype, std::optional<std::vector<int64_t>> axes, bool keep_dims,
            bool noop_with_empty_axes) {
  const Dims* x = ctx.input_dims(0);
  if (!x || !axes || x->empty()) return ctx.set_output(0, dtype, std::nullopt);
  const int64_t rank = static_cast<int64_t>(x->size());
  if (axes->empty() && noop_with_empty_axes) return ctx.set_output(0, dtype, *x);
  std::vector<bool> reduced(static_cast<size_t>(rank), axes->empty());
  for (int64_t a : *axes) reduced[NormalizeAxis(a, rank)] = true;
  Dims out;
  for (int64_t i = 0; i < rank; ++i) {
    if (!reduced[i]) out.push_back((*x)[i]);
    else if (keep_dims) out.push_back(Dim{1, ""});
  }
  ctx.set_output(0, dtype, out);
}

void ReduceRule(InferenceContext& ctx) {
  // Axes moved from attribute to input at opset 13 for ReduceSum, opset 18 for the others.
  const bool axes_input = ctx.opset() >= (ctx.node().op_type == "ReduceSum" ? 13 : 18);
  std::optional<std::vector<int64_t>> axes =
      axes_input ? (ctx.has_input(1) ? ctx.constant_ints(1) : std::vector<int64_t>{}) : ctx.attr_ints("axes");
  Reduce(ctx, ctx.input_dtype(0), axes, ctx.attr_int("keepdims", 1) != 0, ctx.attr_int("noop_with_empty_axes", 0) != 0);
}

void ArgRule(InferenceContext& ctx) {
  Reduce(ctx, DataType::kInt64, std::vector<int64_t>{ctx.attr_int("axis", 0)}, ctx.attr_int("keepdims", 1) != 0, false);
}

void TopKRule(InferenceContext& ctx) {
  const Dims* x = ctx.input_dims(0);
  if (!x || x->empty()) return;
  Dims out = *x;
  const int64_t axis = NormalizeAxis(ctx.attr_int("axis", -1), static_cast<int64_t>(x->size()));
  auto k = ctx.opset() >= 10 ? ctx.constant_ints(1)
                             : std::optional<std::vector<int64_t>>(std::vector<int64_t>{ctx.attr_int("k", -1)});
  out[axis] = k && k->size() == 1 ? Dim{(*k)[0], ""} : Dim{};
  ctx.set_output(0, ctx.input_dtype(0), out);
  if (ctx.num_outputs() > 1) ctx.set_output(1, DataType::kInt64, out);
}

void AttentionRule(InferenceContext& ctx) {
  // com.microsoft.Attention / MultiHeadAttention: [batch, sequence, v_hidden]; the hidden size
  // comes from the weights (Attention) or the query (MultiHeadAttention).
  const Dims* x = ctx.input_dims(0);
  if (!x || x->size() != 3) return ctx.set_output(0, ctx.input_dtype(0), std::nullopt);
  Dims out = *x;
  if (ctx.node().op_type == "Attention") {
    const Dims* w = ctx.input_dims(1);
    const auto qkv = ctx.attr_ints("qkv_hidden_sizes");
    if (qkv.size() == 3) out[2] = Dim{qkv[2], ""};
    else if (w && w->size() == 2 && (*w)[1].known()) out[2] = Dim{(*w)[1].value / 3, ""};
    else out[2] = Dim{};
  }
  ctx.set_output(0, ctx.input_dtype(0), out);
}

// SkipLayerNormalization / SkipSimplifiedLayerNormalization: the output and input_skip_bias_sum
// (output 3) have the input's type; mean and inv_std_var are left unknown.
void SkipNormalizationRule(InferenceContext& ctx) {
  SameAsInput0(ctx);
  if (ctx.num_outputs() > 3 && ctx.input(0)) ctx.set_output_type(3, std::make_shared<TypeInfo>(*ctx.input(0)));
}

struct Registrations {
  Registrations() {
    RegisterInferenceRule("", "MatMul", MatMulRule);
    RegisterInferenceRule("com.microsoft", "FusedMatMul", FusedMatMulRule);
    RegisterInferenceRule("", "Gemm", GemmRule);
    RegisterInferenceRule("", "Conv", ConvRule);
    RegisterInferenceRule("", "ConvInteger", ConvIntegerRule);
    RegisterInferenceRule("", "MatMulInteger", MatMulIntegerRule);
    RegisterInferenceRule("", "QLinearMatMul", QLinearMatMulRule);
    RegisterInferenceRule("", "DynamicQuantizeLinear", DynamicQuantizeLinearRule);
    RegisterInferenceRule("com.microsoft", "FusedConv", ConvRule);
    RegisterInferenceRule("com.onyx", "FusedConv", ConvRule);  // same shapes; Silu and HardSwish added
    RegisterInferenceRule("com.onyx", "DynamicQuantizeConv", DynamicQuantizeConvRule);  // float X in, float Y out
    RegisterInferenceRule("com.microsoft", "QLinearConv", MsQLinearConvRule);
    RegisterInferenceRule("com.onyx", "QLinearConvSiLU", MsQLinearConvRule);  // its SiLU keeps the type
    RegisterInferenceRule("com.onyx", "QLinearConvAdd", MsQLinearConvRule);  // its add keeps the shape and type
    RegisterInferenceRule("", "QLinearConv", MsQLinearConvRule);  // no channels_last there: NCHW
    RegisterInferenceRule("", "QuantizeLinear", QuantizeLinearRule);
    RegisterInferenceRule("", "DequantizeLinear", DequantizeLinearRule);
    RegisterInferenceRule("com.onyx", "ReorderToNchwc", ReorderToNchwcRule);
    RegisterInferenceRule("com.onyx", "ReorderFromNchwc", ReorderFromNchwcRule);
    RegisterInferenceRule("com.onyx", "NchwcConv", NchwcConvRule);
    RegisterInferenceRule("com.onyx", "NchwcDepthwisePointwiseConv", NchwcDepthwisePointwiseConvRule);
    for (const char* op : {"NchwcMaxPool", "NchwcAveragePool"}) RegisterInferenceRule("com.onyx", op, NchwcPoolRule);
    for (const char* op : {"NchwcGlobalAveragePool", "NchwcGlobalMaxPool"})
      RegisterInferenceRule("com.onyx", op, NchwcGlobalPoolRule);
    RegisterInferenceRule("com.onyx", "NchwcScaleChannels", SameAsInput0);
    RegisterInferenceRule("com.onyx", "NchwcUpsample", NchwcUpsampleRule);
    RegisterInferenceRule("", "Resize", ResizeRule);
    for (const char* op : {"MaxPool", "AveragePool", "LpPool"}) RegisterInferenceRule("", op, PoolRule);
    for (const char* op : {"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"})
      RegisterInferenceRule("", op, GlobalPoolRule);
    for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                           "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"})
      RegisterInferenceRule("", op, ReduceRule);
    RegisterInferenceRule("", "ArgMax", ArgRule);
    RegisterInferenceRule("", "ArgMin", ArgRule);
    RegisterInferenceRule("", "TopK", TopKRule);
    for (const char* op : {"Gelu", "FastGelu", "BiasGelu", "QuickGelu", "BiasAdd", "SimplifiedLayerNormalization",
                           "LayerNormalization", "BiasSoftmax"})
      RegisterInferenceRule("com.microsoft", op, SameAsInput0);
    for (const char* op : {"SkipLayerNormalization", "SkipSimplifiedLayerNormalization"})
      RegisterInferenceRule("com.microsoft", op, SkipNormalizationRule);
    RegisterInferenceRule("com.microsoft", "Attention", AttentionRule);
    RegisterInferenceRule("com.microsoft", "MultiHeadAttention", AttentionRule);
  }
} registrations;

}  // namespace
}  // namespace onyx
