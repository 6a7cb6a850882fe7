// com.onyx DynamicQuantizeConv: quantize_dynamic's Conv (DynamicQuantizeLinear, ConvInteger and
// the float scaling) as one node.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "base/int_math.h"
#include "linalg/q8_quantize.h"
#include "linalg/q8_to_float.h"
#include "platform/thread_pool.h"
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
// A Relu or Clip that follows may be fused too (attribute activation), compared as they compare.
// Optional output 1, Y_range (float [2]): [min(0, Y), max(0, Y)], NaNs skipped, taken while Y is
// written; optional input 5, X_range: that of X, from X's producer, in place of the pass over X
// (QdqDynamicConvFusion links a DynamicQuantizeConv read only by others so).
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
    } else if (!act.empty()) {
      info.Fail("activation must be Relu or Clip, not " + act);
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& w = ctx.required_input(1);
    const Tensor& w_scale = ctx.required_input(2);
    const Tensor* w_zp = ctx.input(3);
    const Tensor* bias = ctx.input(4);
    if (x.dtype() != DataType::kFloat) ctx.Fail(StrCat("X must be float, not ", DataTypeName(x.dtype())));
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
    const Tensor* x_range = ctx.input(5);
    if (x_range != nullptr && (x_range->dtype() != DataType::kFloat || x_range->size() != 2))
      ctx.Fail(StrCat("X_range must be float with 2 values, not ", x_range->Describe()));
    Tensor& y = ctx.AllocateOutput(0, DataType::kFloat, OutputShape(g));
    // Y's range (min and max with 0, NaN skipped) for the next DynamicQuantizeConv, taken while Y
    // is written: {0, 0} until then.
    float y_range[2] = {0.0f, 0.0f};
    const bool want_range = ctx.has_output(1);
    auto write_range = [&] {
      if (!want_range) return;
      float* r = ctx.AllocateOutput(1, DataType::kFloat, Shape{2}).data<float>();
      r[0] = y_range[0], r[1] = y_range[1];
    };
    if (y.size() == 0) return write_range();
    ThreadPool* pool = ctx.thread_pool();
    // DynamicQuantizeLinear (quantize_linear.cc's kernel, step by step): the range with 0, its
    // scale and zero point in float, then the codes. Min and max are the same in any split.
    // X_range, when given, is that range as X's producer took it (QdqDynamicConvFusion links the
    // two nodes), so no pass over X: it must hold min(0, X) and max(0, X).
    const float* xd = x.data<float>();
    const int64_t size = x.size();
    constexpr int64_t kChunk = 16384;
    const int64_t chunks = CeilDiv(size, kChunk);
    float lo = 0.0f, hi = 0.0f;
    if (x_range != nullptr) {
      lo = x_range->data<float>()[0], hi = x_range->data<float>()[1];
      if (!(lo <= 0.0f && hi >= 0.0f))
        ctx.Fail(StrCat("X_range must be [min(0, X), max(0, X)], not [", lo, ", ", hi, "]"));
    } else {
      std::vector<float> los(static_cast<size_t>(chunks), 0.0f), his(static_cast<size_t>(chunks), 0.0f);
      ThreadPool::For(pool, chunks, static_cast<double>(kChunk), [&](int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c)
          linalg::Q8MinMax(xd + c * kChunk, std::min(kChunk, size - c * kChunk), &los[static_cast<size_t>(c)],
                           &his[static_cast<size_t>(c)]);
      });
      for (int64_t c = 0; c < chunks; ++c) {
        lo = std::min(lo, los[static_cast<size_t>(c)]);
        hi = std::max(hi, his[static_cast<size_t>(c)]);
      }
    }
    const float x_scale = (hi - lo) / 255.0f;
    float zero_point = 0.0f;
    if (x_scale != 0.0f) zero_point = std::nearbyint(std::clamp(0.0f - lo / x_scale, 0.0f, 255.0f));
    const auto x_zp = static_cast<uint8_t>(zero_point);
    // Kept per thread between calls (as Depthwise2d's scratch): a fresh buffer of a few hundred
    // KB each call came from mmap, and its page faults cost as much as the quantization.
    thread_local std::vector<uint8_t> buffer;
    if (buffer.size() < static_cast<size_t>(size)) buffer.resize(static_cast<size_t>(size));
    uint8_t* codes = buffer.data();  // the workers see this thread's buffer through the pointer
    ThreadPool::For(pool, chunks, 2.0 * static_cast<double>(kChunk), [&](int64_t c0, int64_t c1) {
      const int64_t begin = c0 * kChunk, end = std::min(size, c1 * kChunk);
      linalg::Q8QuantizeU8(xd + begin, end - begin, x_scale, x_zp, codes + begin);
    });
    // The Mul's operand Mul(s, w_scale) per output channel.
    const float* ws = w_scale.data<float>();
    std::vector<float> mult(static_cast<size_t>(m));
    for (int64_t c = 0; c < m; ++c) mult[static_cast<size_t>(c)] = x_scale * ws[w_scale.size() == 1 ? 0 : c];
    const float* bv = bias ? bias->data<float>() : nullptr;
    const int64_t bias_step = bias != nullptr && bias->size() != 1 ? 1 : 0;
    const float clip_lo = lo_, clip_hi = hi_;
    auto* yb = static_cast<uint8_t*>(y.raw_data());
    // Row `plane` (n * M + channel) of Y, values [p0, p0 + count): int32 in, float out, with the
    // graph's float operations (linalg/q8_to_float.h).
    const linalg::Q8ToFloatFn to_float = linalg::Q8ToFloatKernel();
    auto finish_row = [&](int64_t plane, int64_t p0, int64_t count) {
      const int64_t c = plane % m;
      to_float(yb + (plane * g.out_size + p0) * 4, count, mult[static_cast<size_t>(c)],
               bv != nullptr ? bv + c * bias_step : nullptr, clip_lo, clip_hi);
    };
    QuantWeights scratch;
    const QuantWeights& qw = WeightsFor(packed_w_, w, w_zp, g.group, pool, scratch);
    linalg::Q8Output out;
    out.c = y.raw_data();
    if (!qw.nchw.empty()) {
      // The weight-stationary GEMM writes the float result from its registers (the same
      // operations as finish_row, q8_gemm.h's kFloat): no int32 pass over Y.
      std::vector<float> bias_rows;
      if (bv != nullptr) {
        bias_rows.resize(static_cast<size_t>(m));
        for (int64_t c = 0; c < m; ++c) bias_rows[static_cast<size_t>(c)] = bv[c * bias_step];
      }
      out.kind = linalg::Q8Output::kFloat;
      out.scale = mult.data();
      out.scale_per_column = true;
      out.bias = bv != nullptr ? bias_rows.data() : nullptr;
      out.lo = clip_lo, out.hi = clip_hi;
      out.range = want_range ? y_range : nullptr;
      ConvNchw(g, codes, false, x_zp, qw, out, sizeof(float), pool);
      return write_range();
    }
    // The range of finished rows while they are in cache, merged under a lock.
    std::mutex range_mutex;
    auto add_range = [&](const float* v, int64_t count) {
      if (!want_range) return;
      float l = 0.0f, h = 0.0f;
      linalg::Q8MinMax(v, count, &l, &h);
      const std::lock_guard<std::mutex> lock(range_mutex);
      y_range[0] = std::min(y_range[0], l);
      y_range[1] = std::max(y_range[1], h);
    };
    // Else the int32 convolution into Y's buffer (int32 and float are both 4 bytes), finished in
    // pieces that are still in cache where the path allows it (runs of depthwise channels);
    // other paths finish the whole output after.
    if (!qw.depthwise.empty() && g.in.size() == 2) {
      const std::function<void(int64_t, int64_t)> finish = [&](int64_t bc, int64_t count) {
        for (int64_t p = bc; p < bc + count; ++p) finish_row(p, 0, g.out_size);
        add_range(y.data<float>() + bc * g.out_size, count * g.out_size);
      };
      Depthwise2d(g, codes, false, x_zp, qw.depthwise.data(), nullptr, y.raw_data(), sizeof(int32_t), pool, &finish);
      return write_range();
    }
    ConvInt8(ctx, g, codes, false, x_zp, qw, out, sizeof(int32_t), static_cast<int32_t*>(y.raw_data()));
    ThreadPool::For(pool, g.batch * m, 2.0 * static_cast<double>(g.out_size), [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) finish_row(p, 0, g.out_size);
      add_range(y.data<float>() + p0 * g.out_size, (p1 - p0) * g.out_size);
    });
    write_range();
  }

 private:
  ConvAttrs attrs_;
  QuantWeights packed_w_;
  float lo_ = -std::numeric_limits<float>::infinity(), hi_ = std::numeric_limits<float>::infinity();
};

}  // namespace

ONYX_REGISTER_KERNEL("CPU", "com.onyx", "DynamicQuantizeConv", 1, kOpsetMax, DynamicQuantizeConv);

}  // namespace quant_conv
}  // namespace onyx
