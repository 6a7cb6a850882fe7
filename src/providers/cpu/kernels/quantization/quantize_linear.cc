// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear: per-tensor (opset 10), per-axis
// (13), float8 with saturate (19), blocked with block_size, int4/int16 and output_dtype (21),
// float4e2m1 and precision (23), float8e8m0 scales (24), int2/uint2 (25).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "ops/broadcast.h"
#include "linalg/q8_quantize.h"
#include "platform/thread_pool.h"
#include "providers/cpu/kernels/cast/element_convert.h"
#include "providers/cpu/kernels/quantization/quant_common.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

// Elements per parallel step: a multiple of every packing so no two steps share a byte.
constexpr int64_t kStep = 256;

// Where each element of x finds its scale: x is viewed as [outer, axis_dim, inner] and the
// scale of element (o, a, i) is scales[o * so + (a / block) * sa + i * si].
struct ScaleLayout {
  int64_t outer = 1, axis_dim = 1, inner = 1, block = 1;
  int64_t so = 0, sa = 0, si = 0;

  // Calls fn(k, scale_index) for flat elements [begin, begin + n), walking the indices
  // incrementally (no division per element).
  template <typename Fn>
  void ForRange(int64_t begin, int64_t n, Fn&& fn) const {
    if (so == 0 && sa == 0 && si == 0) {
      for (int64_t k = 0; k < n; ++k) fn(k, int64_t{0});
      return;
    }
    int64_t in = begin % inner, rest = begin / inner;
    int64_t a = rest % axis_dim, o = rest / axis_dim;
    for (int64_t k = 0; k < n; ++k) {
      fn(k, o * so + (a / block) * sa + in * si);
      if (++in == inner) {
        in = 0;
        if (++a == axis_dim) a = 0, ++o;
      }
    }
  }

  // Whether ForRuns' runs are longer than one element: every layout but a blocked one whose
  // scales also vary along the inner dims.
  bool HasRuns() const { return si == 0 || inner == 1; }

  // Calls fn(k, length, scale_index) for the runs of flat elements [begin, begin + n) that share
  // one scale (k relative to begin): the whole range per tensor, the rest of an inner row per
  // axis, the rest of a block along the last axis when blocked.
  template <typename Fn>
  void ForRuns(int64_t begin, int64_t n, Fn&& fn) const {
    if (so == 0 && sa == 0 && si == 0) {
      fn(int64_t{0}, n, int64_t{0});
      return;
    }
    int64_t in = begin % inner, rest = begin / inner;
    int64_t a = rest % axis_dim, o = rest / axis_dim;
    for (int64_t k = 0; k < n;) {
      const int64_t a_end = std::min(axis_dim, (a / block + 1) * block);
      const int64_t len = std::min(si != 0 && inner > 1 ? 1 : (a_end - a) * inner - in, n - k);
      fn(k, len, o * so + (a / block) * sa + in * si);
      k += len;
      in += len;
      a += in / inner;
      in %= inner;
      o += a / axis_dim;
      a %= axis_dim;
    }
  }
};

// Resolves per-tensor / per-axis / blocked quantization from the shapes, as ONNX describes it.
ScaleLayout ResolveLayout(KernelContext& ctx, const Tensor& x, const Tensor& scale, const Tensor* zero_point,
                          int64_t axis_attr, int64_t block_size, int opset) {
  if (zero_point != nullptr && zero_point->shape() != scale.shape() &&
      !(zero_point->size() == 1 && scale.size() == 1))
    ctx.Fail(StrCat("the zero point's shape ", ShapeToString(zero_point->shape()), " differs from the scale's ",
                    ShapeToString(scale.shape())));
  ScaleLayout l;
  if (block_size < 0) ctx.Fail(StrCat("block_size must be positive, not ", block_size));
  if (block_size == 0 && scale.size() == 1) return l;  // per tensor
  if (opset < 13) ctx.Fail(StrCat("the scale must be a scalar before opset 13, not ", scale.Describe()));
  const int64_t rank = static_cast<int64_t>(x.rank());
  if (rank == 0) ctx.Fail(StrCat("a scalar input needs a scalar scale, not ", scale.Describe()));
  if (axis_attr < -rank || axis_attr >= rank) ctx.Fail(StrCat("axis ", axis_attr, " is out of range for rank ", rank));
  const int64_t axis = axis_attr < 0 ? axis_attr + rank : axis_attr;
  l.axis_dim = x.dim(static_cast<size_t>(axis));
  for (int64_t d = 0; d < axis; ++d) l.outer *= x.dim(static_cast<size_t>(d));
  for (int64_t d = axis + 1; d < rank; ++d) l.inner *= x.dim(static_cast<size_t>(d));
  if (block_size == 0) {
    if (scale.rank() != 1 || scale.dim(0) != l.axis_dim)
      ctx.Fail(StrCat("per-axis quantization along axis ", axis, " needs a 1-D scale of ", l.axis_dim,
                      " elements, not ", scale.Describe()));
    l.sa = 1;
    return l;
  }
  if (opset < 21) ctx.Fail("block_size needs opset 21");
  bool ok = static_cast<int64_t>(scale.rank()) == rank;
  for (int64_t d = 0; ok && d < rank; ++d)
    if (d != axis) ok = scale.dim(static_cast<size_t>(d)) == x.dim(static_cast<size_t>(d));
  const int64_t blocks = (l.axis_dim + block_size - 1) / block_size;
  if (!ok || scale.dim(static_cast<size_t>(axis)) != blocks)
    ctx.Fail(StrCat("blocked quantization of ", x.Describe(), " along axis ", axis, " with block_size ", block_size,
                    " needs a scale shaped like the input with ", blocks, " along the axis, not ", scale.Describe()));
  l.block = block_size;
  l.so = blocks * l.inner;
  l.sa = l.inner;
  l.si = 1;
  return l;
}

bool IsFloat8(DataType t) {
  return t == DataType::kFloat8E4M3FN || t == DataType::kFloat8E4M3FNUZ || t == DataType::kFloat8E5M2 ||
         t == DataType::kFloat8E5M2FNUZ;
}

// DequantizeLinear's float8 zero point must be 0, as ONNX Runtime and ONNX's reference require (the
// spec's formula would subtract it). A -0 is taken as +0, so -0 codes stay -0 (x - 0).
void CheckFloat8ZeroPoint(KernelContext& ctx, std::vector<double>* zps) {
  for (double& z : *zps) {
    if (z != 0.0) ctx.Fail(StrCat("a float8 zero point must be 0, not ", z));
    z = 0.0;
  }
}

class QuantizeLinear final : public OpKernel {
 public:
  explicit QuantizeLinear(const KernelInfo& info) : opset_(info.opset()) {
    if (opset_ >= 13) axis_ = info.GetIntOr("axis", 1);
    if (opset_ >= 19) opts_.saturate = info.GetIntOr("saturate", 1) != 0;
    if (opset_ >= 21) {
      block_size_ = info.GetIntOr("block_size", 0);
      output_dtype_ = info.GetIntOr("output_dtype", 0);
      if (output_dtype_ != 0 && !IsValidDataType(static_cast<int32_t>(output_dtype_)))
        info.Fail(StrCat("output_dtype ", output_dtype_, " is not an ONNX element type"));
    }
    if (opset_ >= 23) {
      const int64_t p = info.GetIntOr("precision", 0);
      if (p != 0) {
        precision_ = static_cast<DataType>(p);
        if (precision_ != DataType::kFloat && precision_ != DataType::kFloat16 && precision_ != DataType::kBFloat16)
          info.Fail(StrCat("precision must be float, float16 or bfloat16, not ", p));
      }
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& scale = ctx.required_input(1);
    const Tensor* zp = ctx.input(2);
    DataType out_type = DataType::kUInt8;
    if (zp != nullptr) {
      out_type = zp->dtype();
      if (output_dtype_ != 0 && static_cast<DataType>(output_dtype_) != out_type)
        ctx.Fail(StrCat("output_dtype ", DataTypeName(static_cast<DataType>(output_dtype_)),
                        " differs from the zero point's type ", DataTypeName(out_type)));
    } else if (output_dtype_ != 0) {
      out_type = static_cast<DataType>(output_dtype_);
    }
    int64_t lo = 0, hi = 0;
    const bool integer_out = QuantIntegerRange(out_type, &lo, &hi) && out_type != DataType::kInt32;
    if (!integer_out && !IsFloat8(out_type) && out_type != DataType::kFloat4E2M1)
      ctx.Fail(StrCat("cannot quantize to ", DataTypeName(out_type)));
    const DataType xt = x.dtype();
    if (xt != DataType::kFloat && xt != DataType::kFloat16 && xt != DataType::kBFloat16 && xt != DataType::kInt32)
      ctx.Fail(StrCat("cannot quantize ", DataTypeName(xt), " input"));
    const DataType st = scale.dtype();
    if (st != DataType::kFloat && st != DataType::kFloat16 && st != DataType::kBFloat16 && st != DataType::kInt32 &&
        st != DataType::kFloat8E8M0)
      ctx.Fail(StrCat("scale of type ", DataTypeName(st), " is not supported"));
    const ScaleLayout layout = ResolveLayout(ctx, x, scale, zp, axis_, block_size_, opset_);

    // The division runs in the precision attribute's type, else the scale's (ONNX 23+); float
    // before that. int32 inputs divide in double (float cannot hold them; the reference does).
    DataType precision = precision_;
    if (precision == DataType::kUndefined)
      precision = opset_ >= 23 && (st == DataType::kFloat16 || st == DataType::kBFloat16) ? st : DataType::kFloat;
    if (st == DataType::kInt32 && precision_ == DataType::kUndefined) precision = DataType::kDouble;
    if (xt == DataType::kInt32 && precision == DataType::kFloat) precision = DataType::kDouble;

    const std::vector<double> scales = AllAsDoubles(scale);
    const std::vector<double> zps = zp ? AllAsDoubles(*zp) : std::vector<double>(scales.size(), 0.0);
    // A float8 zero point is not added: ONNX Runtime and ONNX's reference ignore it, whatever its
    // value (adding even a zero would turn -0 into +0).
    const bool add_zp = !IsFloat8(out_type);
    Tensor& y = ctx.AllocateOutput(0, out_type, x.shape());
    const int64_t n = x.size();
    if (DataTypeBits(out_type) < 8) std::memset(y.raw_data(), 0, static_cast<size_t>(y.byte_size()));
    const ConvertOptions opts = opts_;
    const int64_t steps = (n + kStep - 1) / kStep;
    if (xt == DataType::kFloat && precision == DataType::kFloat &&
        (out_type == DataType::kUInt8 || out_type == DataType::kInt8)) {
      // The common float -> 8-bit case, directly: the same arithmetic in float (the sum with the
      // zero point is exact wherever it is not clamped anyway).
      const std::vector<float> fs(scales.begin(), scales.end()), fz(zps.begin(), zps.end());
      const float* px = x.data<float>();
      auto run = [&](auto* py) {
        using Q = std::remove_pointer_t<decltype(py)>;
        const auto flo = static_cast<float>(lo), fhi = static_cast<float>(hi);
        ThreadPool::For(ctx.thread_pool(), steps, 4.0 * kStep, [&](int64_t sb, int64_t se) {
          const int64_t begin = sb * kStep, count = std::min(n, se * kStep) - begin;
          if (!layout.HasRuns()) {
            layout.ForRange(begin, count, [&](int64_t k, int64_t s) {
              const float z = fz[static_cast<size_t>(s)];
              float r = std::nearbyint(px[begin + k] / fs[static_cast<size_t>(s)]) + z;
              r = std::isnan(r) ? flo : std::min(std::max(r, flo), fhi);  // NaN: the lowest code
              py[begin + k] = static_cast<Q>(r);
            });
            return;
          }
          // Runs sharing a scale through the vectorized loops (linalg/q8_quantize.h).
          layout.ForRuns(begin, count, [&](int64_t k, int64_t len, int64_t s) {
            const auto i = static_cast<size_t>(s);
            if constexpr (std::is_same_v<Q, uint8_t>)
              linalg::Q8QuantizeU8(px + begin + k, len, fs[i], static_cast<uint8_t>(fz[i]), py + begin + k);
            else
              linalg::Q8QuantizeS8(px + begin + k, len, fs[i], static_cast<int8_t>(fz[i]), py + begin + k);
          });
        });
      };
      if (out_type == DataType::kUInt8) run(y.data<uint8_t>());
      else run(y.data<int8_t>());
      return;
    }
    ThreadPool::For(ctx.thread_pool(), steps, 12.0 * kStep, [&](int64_t sb, int64_t se) {
      double xv[kStep], qv[kStep];
      int64_t iv[kStep];
      for (int64_t c = sb * kStep; c < std::min(n, se * kStep); c += kStep) {
        const int64_t m = std::min(kStep, n - c);
        LoadDoubles(x, c, m, xv);
        layout.ForRange(c, m, [&](int64_t k, int64_t s) {
          const double q = RoundToType(xv[k] / scales[static_cast<size_t>(s)], precision);
          const double z = zps[static_cast<size_t>(s)];
          if (integer_out) iv[k] = RoundAndSaturate(std::nearbyint(q) + z, lo, hi, lo);  // NaN: the lowest code
          else qv[k] = add_zp ? q + z : q;
        });
        if (integer_out) StoreInt64s(y, c, m, iv, opts);
        else StoreDoubles(y, c, m, qv, opts);
      }
    });
  }

 private:
  int opset_;
  int64_t axis_ = 1;
  int64_t block_size_ = 0;
  int64_t output_dtype_ = 0;
  DataType precision_ = DataType::kUndefined;
  ConvertOptions opts_;
};

class DequantizeLinear final : public OpKernel {
 public:
  explicit DequantizeLinear(const KernelInfo& info) : opset_(info.opset()) {
    if (opset_ >= 13) axis_ = info.GetIntOr("axis", 1);
    if (opset_ >= 21) block_size_ = info.GetIntOr("block_size", 0);
    if (opset_ >= 23) {
      const int64_t o = info.GetIntOr("output_dtype", 0);
      if (o != 0) {
        output_dtype_ = static_cast<DataType>(o);
        if (output_dtype_ != DataType::kFloat && output_dtype_ != DataType::kFloat16 &&
            output_dtype_ != DataType::kBFloat16)
          info.Fail(StrCat("output_dtype must be float, float16 or bfloat16, not ", o));
      }
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& scale = ctx.required_input(1);
    const Tensor* zp = ctx.input(2);
    int64_t lo, hi;
    const DataType xt = x.dtype();
    if (!QuantIntegerRange(xt, &lo, &hi) && !IsFloat8(xt) && xt != DataType::kFloat4E2M1)
      ctx.Fail(StrCat("cannot dequantize ", DataTypeName(xt), " input"));
    if (zp != nullptr && zp->dtype() != xt)
      ctx.Fail(StrCat("the zero point's type ", DataTypeName(zp->dtype()), " differs from the input's ",
                      DataTypeName(xt)));
    const DataType st = scale.dtype();
    if (st != DataType::kFloat && st != DataType::kFloat16 && st != DataType::kBFloat16 && st != DataType::kFloat8E8M0)
      ctx.Fail(StrCat("scale of type ", DataTypeName(st), " is not supported"));
    DataType out_type = output_dtype_;
    if (out_type == DataType::kUndefined) out_type = opset_ < 19 || st == DataType::kFloat8E8M0 ? DataType::kFloat : st;
    const ScaleLayout layout = ResolveLayout(ctx, x, scale, zp, axis_, block_size_, opset_);
    const std::vector<double> scales = AllAsDoubles(scale);
    std::vector<double> zps = zp ? AllAsDoubles(*zp) : std::vector<double>(scales.size(), 0.0);
    if (IsFloat8(xt)) CheckFloat8ZeroPoint(ctx, &zps);
    Tensor& y = ctx.AllocateOutput(0, out_type, x.shape());
    const int64_t n = x.size();
    const int64_t steps = (n + kStep - 1) / kStep;
    if ((xt == DataType::kUInt8 || xt == DataType::kInt8) && out_type == DataType::kFloat) {
      // The common 8-bit -> float case, directly, with the same float arithmetic.
      const std::vector<float> fs(scales.begin(), scales.end()), fz(zps.begin(), zps.end());
      float* py = y.data<float>();
      auto run = [&](const auto* px) {
        using Q = std::remove_const_t<std::remove_pointer_t<decltype(px)>>;
        ThreadPool::For(ctx.thread_pool(), steps, 2.0 * kStep, [&](int64_t sb, int64_t se) {
          const int64_t begin = sb * kStep, count = std::min(n, se * kStep) - begin;
          if (!layout.HasRuns()) {
            layout.ForRange(begin, count, [&](int64_t k, int64_t s) {
              const size_t i = static_cast<size_t>(s);
              py[begin + k] = (static_cast<float>(px[begin + k]) - fz[i]) * fs[i];
            });
            return;
          }
          layout.ForRuns(begin, count, [&](int64_t k, int64_t len, int64_t s) {
            const auto i = static_cast<size_t>(s);
            if constexpr (std::is_same_v<Q, uint8_t>)
              linalg::Q8DequantizeU8(px + begin + k, len, fs[i], fz[i], py + begin + k);
            else
              linalg::Q8DequantizeS8(px + begin + k, len, fs[i], fz[i], py + begin + k);
          });
        });
      };
      if (xt == DataType::kUInt8) run(x.data<uint8_t>());
      else run(x.data<int8_t>());
      return;
    }
    ThreadPool::For(ctx.thread_pool(), steps, 8.0 * kStep, [&](int64_t sb, int64_t se) {
      double xv[kStep];
      for (int64_t c = sb * kStep; c < std::min(n, se * kStep); c += kStep) {
        const int64_t m = std::min(kStep, n - c);
        LoadDoubles(x, c, m, xv);
        // (x - zero_point) * scale in float, as ONNX's reference computes it; one rounding
        // to the output type after that.
        layout.ForRange(c, m, [&](int64_t k, int64_t s) {
          const float d = static_cast<float>(xv[k]) - static_cast<float>(zps[static_cast<size_t>(s)]);
          xv[k] = static_cast<double>(d * static_cast<float>(scales[static_cast<size_t>(s)]));
        });
        StoreDoubles(y, c, m, xv, ConvertOptions{});
      }
    });
  }

 private:
  int opset_;
  int64_t axis_ = 1;
  int64_t block_size_ = 0;
  DataType output_dtype_ = DataType::kUndefined;
};

// DynamicQuantizeLinear-11: uint8 only. The scale and zero point in float as ONNX Runtime computes
// them (DynamicQuantParamsOf; the op's function body, which they equal bit for bit elsewhere,
// divides by 0 on an all-zero input).
class DynamicQuantizeLinear final : public OpKernel {
 public:
  explicit DynamicQuantizeLinear(const KernelInfo&) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    if (x.dtype() != DataType::kFloat) ctx.Fail(StrCat("input must be float, not ", DataTypeName(x.dtype())));
    const float* px = x.data<float>();
    const int64_t n = x.size();
    float lo = 0.0f, hi = 0.0f;  // the range always includes 0
    linalg::Q8MinMax(px, n, &lo, &hi, ctx.thread_pool());
    const DynamicQuantParams q = DynamicQuantParamsOf(lo, hi);
    const float scale = q.scale;
    const uint8_t zp = q.zero_point;
    Tensor& y = ctx.AllocateOutput(0, DataType::kUInt8, x.shape());
    Tensor& y_scale = ctx.AllocateOutput(1, DataType::kFloat, {});
    Tensor& y_zp = ctx.AllocateOutput(2, DataType::kUInt8, {});
    *y_scale.data<float>() = scale;
    *y_zp.data<uint8_t>() = zp;
    uint8_t* py = y.data<uint8_t>();
    // Vectorized per ISA (linalg/q8_quantize.h): nearbyint(x / scale) + zp, saturated.
    ThreadPool::For(ctx.thread_pool(), n, 2.0, [&](int64_t b, int64_t e) {
      linalg::Q8QuantizeU8(px + b, e - b, scale, zp, py + b);
    });
  }
};

// Each opset range reads its own attributes (see the constructors) and accepts its types.
ONYX_CPU_KERNEL("QuantizeLinear", 10, 12, QuantizeLinear);
ONYX_CPU_KERNEL("QuantizeLinear", 13, 18, QuantizeLinear);
ONYX_CPU_KERNEL("QuantizeLinear", 19, 20, QuantizeLinear);
ONYX_CPU_KERNEL("QuantizeLinear", 21, 22, QuantizeLinear);
ONYX_CPU_KERNEL("QuantizeLinear", 23, kOpsetMax, QuantizeLinear);
ONYX_CPU_KERNEL("DequantizeLinear", 10, 12, DequantizeLinear);
ONYX_CPU_KERNEL("DequantizeLinear", 13, 18, DequantizeLinear);
ONYX_CPU_KERNEL("DequantizeLinear", 19, 20, DequantizeLinear);
ONYX_CPU_KERNEL("DequantizeLinear", 21, 22, DequantizeLinear);
ONYX_CPU_KERNEL("DequantizeLinear", 23, kOpsetMax, DequantizeLinear);
ONYX_CPU_KERNEL("DynamicQuantizeLinear", 11, kOpsetMax, DynamicQuantizeLinear);

}  // namespace
}  // namespace onyx
