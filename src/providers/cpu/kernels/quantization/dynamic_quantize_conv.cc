// com.onyx DynamicQuantizeConv: quantize_dynamic's Conv (DynamicQuantizeLinear, ConvInteger and
// the float scaling) as one node.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "base/int_math.h"
#include "linalg/q8_quantize.h"
#include "linalg/q8_to_float.h"
#include "platform/thread_pool.h"
#include "providers/cpu/kernels/quantization/dynamic_conv_codes.h"
#include "providers/cpu/kernels/quantization/quant_common.h"
#include "providers/cpu/kernels/quantization/quant_conv_compute.h"
#include "providers/kernel.h"

namespace onyx {
namespace quant_conv {
namespace {

// com.onyx DynamicQuantizeConv(X, W, w_scale, w_zero_point?, B?), Conv's attributes: what
// onnxruntime.quantization.quantize_dynamic writes for a Conv as one node (the optimizer's
// QdqDynamicConvFusion makes it):
//   (q, s, z) = DynamicQuantizeLinear(X)
//   Y = Cast<float>(ConvInteger(q, W, z, w_zero_point)) * (s * w_scale) + B
// X is quantized here as Onyx's DynamicQuantizeLinear does it, the int32 result is written into
// Y's buffer and turned into float in place, plane by plane, with the graph's float operations
// in its order (a product, then a sum, each rounded: linalg/q8_to_float.h), so the
// node equals the unfused graph bit for bit. w_scale and B: one value, or one per output channel.
// A Relu or Clip that follows may be fused too (attribute activation), compared as they compare,
// or a SiLU (activation "Silu": Sigmoid, then Mul with the input), as Onyx's two kernels compute it.
// Optional input 6, Z (float, Y's shape): a residual Add's other operand, added (one rounding)
// after B and before the activation.
// Optional output 1, Y_range (float [2]): [min(0, Y), max(0, Y)], NaNs skipped, taken while Y is
// written; optional input 5, X_range: that of X, from X's producer, in place of the pass over X
// (QdqDynamicConvFusion links a DynamicQuantizeConv read only by others so). Optional output 2,
// Y_codes (uint8, Y's shape): DynamicQuantizeLinear's codes of Y with Y_range's scale and zero
// point, which a next DynamicQuantizeConv reads as its X (uint8, with X_range) instead of
// quantizing Y again; Y (output 0) is then usually absent and, where the conv allows it
// (dynamic_conv_codes.h), never written to memory.
class DynamicQuantizeConv final : public OpKernel {
 public:
  explicit DynamicQuantizeConv(const KernelInfo& info)
      : attrs_(ReadConvAttrs(info)), packed_w_(PrepackWeights(info, 1, 3, attrs_.group)) {
    // A following Relu or Clip: activation "Relu", or "Clip" with activation_params [min, max].
    const std::string act = info.GetStringOr("activation", "");
    if (act == "Relu") {
      lo_ = 0.0f;
    } else if (act == "Clip") {
      const std::vector<float> p = info.GetFloatsOr("activation_params", {});
      if (p.size() != 2) info.Fail("activation Clip needs activation_params [min, max]");
      lo_ = p[0], hi_ = p[1];
    } else if (act == "Silu") {
      silu_ = true;
    } else if (!act.empty()) {
      info.Fail("activation must be Relu, Clip or Silu, not " + act);
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& w = ctx.required_input(1);
    const Tensor& w_scale = ctx.required_input(2);
    const Tensor* w_zp = ctx.input(3);
    const Tensor* bias = ctx.input(4);
    const Tensor* x_range = ctx.input(5);
    // X is float, or (a linked producer's Y_codes) uint8 codes quantized with X_range's parameters.
    const bool x_codes = x.dtype() == DataType::kUInt8;
    if (x.dtype() != DataType::kFloat && !x_codes)
      ctx.Fail(StrCat("X must be float (or uint8 codes), not ", DataTypeName(x.dtype())));
    if (x_codes && x_range == nullptr) ctx.Fail("X as uint8 codes needs X_range");
    if (!IsInt8Type(w.dtype())) ctx.Fail(StrCat("W must be int8 or uint8, not ", DataTypeName(w.dtype())));
    if (w_zp && w_zp->dtype() != w.dtype()) ctx.Fail("w_zero_point's type differs from W's");
    if (w_scale.dtype() != DataType::kFloat) ctx.Fail(StrCat("w_scale must be float, not ", w_scale.Describe()));
    const ConvGeometry g = ResolveConv(ctx, attrs_, x, w);
    const int64_t m = g.out_channels;
    CheckPerChannel(ctx, "w_zero_point", w_zp, m);
    if (w_scale.size() != 1 && w_scale.size() != m)
      ctx.Fail(StrCat("w_scale must have 1 or ", m, " values, not ", w_scale.Describe()));
    if (bias && (bias->dtype() != DataType::kFloat || (bias->size() != 1 && bias->size() != m)))
      ctx.Fail(StrCat("B must be float with 1 or ", m, " values, not ", bias->Describe()));
    if (x_range != nullptr && (x_range->dtype() != DataType::kFloat || x_range->size() != 2))
      ctx.Fail(StrCat("X_range must be float with 2 values, not ", x_range->Describe()));
    // Y's range (min and max with 0, NaN skipped) for the next DynamicQuantizeConv, taken while Y
    // is written: {0, 0} until then. With Y_codes (output 2), Y itself is usually not wanted.
    float y_range[2] = {0.0f, 0.0f};
    const bool want_codes = ctx.has_output(2);
    const bool want_range = ctx.has_output(1) || want_codes;
    auto write_range = [&] {
      if (!ctx.has_output(1)) return;
      float* r = ctx.AllocateOutput(1, DataType::kFloat, Shape{2}).data<float>();
      r[0] = y_range[0], r[1] = y_range[1];
    };
    const Shape y_shape = OutputShape(g);
    const int64_t y_size = g.batch * m * g.out_size;
    Tensor* y = ctx.has_output(0) ? &ctx.AllocateOutput(0, DataType::kFloat, y_shape) : nullptr;
    uint8_t* y_codes = want_codes ? ctx.AllocateOutput(2, DataType::kUInt8, y_shape).data<uint8_t>() : nullptr;
    if (y_size == 0) return write_range();
    ThreadPool* pool = ctx.thread_pool();
    // X's codes: given, or DynamicQuantizeLinear's (quantize_linear.cc's kernel, step by step):
    // the range with 0, its scale and zero point in float, then the codes. Min and max are the
    // same in any split. X_range, when given, is that range as X's producer took it
    // (QdqDynamicConvFusion links the two nodes), so no pass over X: it must hold min(0, X) and
    // max(0, X).
    float lo = 0.0f, hi = 0.0f;
    if (x_range != nullptr) {
      lo = x_range->data<float>()[0], hi = x_range->data<float>()[1];
      if (!(lo <= 0.0f && hi >= 0.0f))
        ctx.Fail(StrCat("X_range must be [min(0, X), max(0, X)], not [", lo, ", ", hi, "]"));
    } else {
      linalg::Q8MinMax(x.data<float>(), x.size(), &lo, &hi, pool);
    }
    const DynamicQuantParams xq = DynamicQuantParamsOf(lo, hi);
    const uint8_t* codes = x_codes ? x.data<uint8_t>() : QuantizeInput(x, xq, pool);
    // The Mul's operand Mul(s, w_scale) per output channel, and B per output channel.
    const float* ws = w_scale.data<float>();
    std::vector<float> mult(static_cast<size_t>(m));
    for (int64_t c = 0; c < m; ++c) mult[static_cast<size_t>(c)] = xq.scale * ws[w_scale.size() == 1 ? 0 : c];
    std::vector<float> bias_rows;
    if (bias != nullptr) {
      bias_rows.resize(static_cast<size_t>(m));
      for (int64_t c = 0; c < m; ++c) bias_rows[static_cast<size_t>(c)] = bias->data<float>()[bias->size() == 1 ? 0 : c];
    }
    DynamicFloatStage stage;
    stage.mult = mult.data();
    stage.bias = bias != nullptr ? bias_rows.data() : nullptr;
    stage.lo = lo_, stage.hi = hi_;
    stage.silu = silu_;
    // Z (input 6): a residual Add's other operand, Y's shape, added before the activation.
    if (const Tensor* z = ctx.input(6)) {
      if (z->dtype() != DataType::kFloat || z->shape() != y_shape)
        ctx.Fail(StrCat("Z must be float of Y's shape ", ShapeToString(y_shape), ", not ", z->Describe()));
      stage.z = z->data<float>();
    }
    QuantWeights scratch;
    const QuantWeights& qw = WeightsFor(packed_w_, w, w_zp, g.group, pool, scratch);
    if (want_codes && y == nullptr && stage.z == nullptr && CodesInPieces(g, qw)) {
      // Y's codes without Y in memory: the conv twice, in pieces that stay in cache.
      ConvToCodesInPieces(g, codes, xq.zero_point, qw, stage, y_range, y_codes, pool);
      return write_range();
    }
    // Else Y in float (into a buffer of this call when only its codes are wanted), then its codes.
    thread_local std::vector<float> y_buffer;  // kept: as QuantizeInput's
    if (y == nullptr && y_buffer.size() < static_cast<size_t>(y_size)) y_buffer.resize(static_cast<size_t>(y_size));
    float* yd = y != nullptr ? y->data<float>() : y_buffer.data();
    // Only the codes: computed and quantized by the same tasks, a part at a time, where the conv allows it.
    if (want_codes && y == nullptr && ConvToCodesOnce(g, codes, xq.zero_point, qw, stage, y_range, yd, y_codes, pool))
      return write_range();
    ConvToFloat(ctx, g, codes, xq.zero_point, qw, stage, want_range ? y_range : nullptr, yd);
    if (want_codes) {
      const DynamicQuantParams yq = DynamicQuantParamsOf(y_range[0], y_range[1]);
      QuantizeChunks(yd, y_size, yq, y_codes, pool);
    }
    write_range();
  }

 private:
  static constexpr int64_t kChunk = 16384;

  // codes = Q8QuantizeU8(x) in chunks on the pool.
  static void QuantizeChunks(const float* x, int64_t size, DynamicQuantParams q, uint8_t* codes, ThreadPool* pool) {
    ThreadPool::For(pool, CeilDiv(size, kChunk), 2.0 * static_cast<double>(kChunk), [&](int64_t c0, int64_t c1) {
      const int64_t begin = c0 * kChunk, end = std::min(size, c1 * kChunk);
      linalg::Q8QuantizeU8(x + begin, end - begin, q.scale, q.zero_point, codes + begin);
    });
  }

  // X's codes in a buffer of this thread. Kept between calls (as Depthwise2d's scratch): a fresh
  // buffer of a few hundred KB each call came from mmap, and its page faults cost as much as the
  // quantization.
  static const uint8_t* QuantizeInput(const Tensor& x, DynamicQuantParams q, ThreadPool* pool) {
    thread_local std::vector<uint8_t> buffer;
    if (buffer.size() < static_cast<size_t>(x.size())) buffer.resize(static_cast<size_t>(x.size()));
    QuantizeChunks(x.data<float>(), x.size(), q, buffer.data(), pool);
    return buffer.data();  // the workers see this thread's buffer through the pointer
  }

  // The conv into float Y (yd), with Y's range into range when not null.
  static void ConvToFloat(KernelContext& ctx, const ConvGeometry& g, const uint8_t* codes, uint8_t x_zp,
                          const QuantWeights& qw, const DynamicFloatStage& stage, float* range, float* yd) {
    ThreadPool* pool = ctx.thread_pool();
    const int64_t m = g.out_channels;
    if (PointwisePostInPieces(g, codes, x_zp, qw, stage, range, yd, pool)) return;
    const DynamicFloatStage pre = stage.Pre();
    if (!qw.nchw.empty()) {
      // The weight-stationary GEMM writes the float result from its registers (the same
      // operations as Q8ToFloat, q8_gemm.h's kFloat): no int32 pass over Y.
      linalg::Q8Output out = StageOutput(pre, linalg::Q8Output::kFloat, yd, 0);
      out.range = stage.HasPost() ? nullptr : range;
      ConvNchw(g, codes, false, x_zp, qw, out, sizeof(float), pool);
      if (stage.HasPost()) FinishPost(stage, yd, g.batch * m * g.out_size, range, pool);
      return;
    }
    // Row `plane` (n * M + channel) of Y: int32 in, float out, with the graph's float operations
    // (linalg/q8_to_float.h).
    const linalg::Q8ToFloatFn to_float = linalg::Q8ToFloatKernel();
    auto finish_row = [&](int64_t plane) {
      const int64_t c = plane % m;
      to_float(yd + plane * g.out_size, g.out_size, pre.mult[c], pre.bias != nullptr ? pre.bias + c : nullptr, pre.lo,
               pre.hi);
    };
    // The range of finished rows while they are in cache.
    SharedRange shared(range);
    // Else the int32 convolution into Y's buffer (int32 and float are both 4 bytes), finished in
    // pieces that are still in cache where the path allows it (runs of depthwise channels);
    // other paths finish the whole output after.
    if (!qw.depthwise.empty() && g.in.size() == 2) {
      const std::function<void(int64_t, int64_t)> finish = [&](int64_t bc, int64_t count) {
        for (int64_t p = bc; p < bc + count; ++p) finish_row(p);
        PostStage(stage, yd + bc * g.out_size, bc * g.out_size, count * g.out_size);
        shared.Add(yd + bc * g.out_size, count * g.out_size);
      };
      Depthwise2d(g, codes, false, x_zp, qw.depthwise.data(), nullptr, yd, sizeof(int32_t), pool, &finish);
      return;
    }
    linalg::Q8Output out;  // int32 into Y's buffer
    out.c = yd;
    ConvInt8(ctx, g, codes, false, x_zp, qw, out, sizeof(int32_t), reinterpret_cast<int32_t*>(yd));
    ThreadPool::For(pool, g.batch * m, 2.0 * static_cast<double>(g.out_size), [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) finish_row(p);
      PostStage(stage, yd + p0 * g.out_size, p0 * g.out_size, (p1 - p0) * g.out_size);
      shared.Add(yd + p0 * g.out_size, (p1 - p0) * g.out_size);
    });
  }

  // The post stage (residual, SiLU) over the whole float output, with its range (when not null)
  // taken after it.
  static void FinishPost(const DynamicFloatStage& stage, float* y, int64_t size, float* range, ThreadPool* pool) {
    SharedRange shared(range);
    ThreadPool::For(pool, CeilDiv(size, kChunk), 20.0 * static_cast<double>(kChunk), [&](int64_t c0, int64_t c1) {
      const int64_t begin = c0 * kChunk, end = std::min(size, c1 * kChunk);
      PostStage(stage, y + begin, begin, end - begin);
      shared.Add(y + begin, end - begin);
    });
  }

  ConvAttrs attrs_;
  QuantWeights packed_w_;
  float lo_ = -std::numeric_limits<float>::infinity(), hi_ = std::numeric_limits<float>::infinity();
  bool silu_ = false;  // activation Silu: x * Sigmoid(x)
};

}  // namespace

ONYX_REGISTER_KERNEL("CPU", "com.onyx", "DynamicQuantizeConv", 1, kOpsetMax, DynamicQuantizeConv);

}  // namespace quant_conv
}  // namespace onyx
