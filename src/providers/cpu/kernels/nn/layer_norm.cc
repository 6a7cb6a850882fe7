// LayerNormalization (opset 17) and RMSNormalization (opset 23): X is viewed as
// [prod(dims[:axis]), prod(dims[axis:])] and each row is normalized (by mean and variance, or
// by its root mean square), then scaled (and shifted) by parameters broadcast to the
// normalized shape. LayerNormalization also emits Mean and InvStdDev in the stash type. Float
// inputs with a float stash run linalg's fused row kernels; a LayerNormalization fed by a
// DequantizeLinear or feeding a QuantizeLinear runs ONNX Runtime's float arithmetic instead
// (linalg::LayerNormRowsCentered), so the codes it is quantized to are ONNX Runtime's.
#include <algorithm>
#include <cmath>
#include <vector>

#include "base/type_traits.h"
#include "linalg/layer_norm_centered.h"
#include "linalg/vector_math.h"
#include "ops/broadcast.h"
#include "platform/thread_pool.h"
#include "providers/cpu/kernels/quantization/qdq_neighbours.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

// A parameter's shape with leading 1s dropped, checked to broadcast (numpy-style,
// right-aligned) to `norm_shape`.
Shape CheckParam(const Tensor& t, const Shape& norm_shape, const char* name, const KernelContext& ctx) {
  Shape shape = t.shape();
  while (shape.size() > norm_shape.size() && shape.front() == 1) shape.erase(shape.begin());
  bool ok = shape.size() <= norm_shape.size();
  for (size_t i = 0; ok && i < shape.size(); ++i) {
    const int64_t want = norm_shape[norm_shape.size() - shape.size() + i];
    ok = shape[i] == want || shape[i] == 1;
  }
  if (!ok)
    ctx.Fail(StrCat(name, " of shape ", ShapeToString(t.shape()), " does not broadcast to the normalized shape ",
                    ShapeToString(norm_shape)));
  return shape;
}

// A parameter broadcast to `norm_shape`, as `count` doubles.
std::vector<double> ExpandParam(const Tensor& t, const Shape& norm_shape, const char* name, const KernelContext& ctx) {
  const Shape shape = CheckParam(t, norm_shape, name, ctx);
  std::vector<double> values(static_cast<size_t>(t.size()));
  Dispatch(FloatTypes{}, t.dtype(), ctx.node(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = t.data<T>();
    for (int64_t i = 0; i < t.size(); ++i) values[i] = static_cast<double>(ToCompute(p[i]));
  });
  const int64_t count = ShapeSize(norm_shape);
  if (t.size() == count) return values;
  std::vector<double> out(static_cast<size_t>(count));
  const std::vector<int64_t> strides = BroadcastStrides(shape, norm_shape);
  std::vector<int64_t> pos(norm_shape.size(), 0);
  int64_t src = 0;
  for (int64_t i = 0; i < count; ++i) {
    out[i] = values[src];
    for (size_t d = norm_shape.size(); d-- > 0;) {
      src += strides[d];
      if (++pos[d] < norm_shape[d]) break;
      src -= strides[d] * norm_shape[d];
      pos[d] = 0;
    }
  }
  return out;
}

// A parameter as `count` floats: the tensor's own data when it is float and already has the
// normalized shape (the usual case), else an expanded copy in `storage`.
const float* FloatParam(const Tensor& t, const Shape& norm_shape, const char* name, const KernelContext& ctx,
                        std::vector<float>& storage) {
  CheckParam(t, norm_shape, name, ctx);
  if (t.dtype() == DataType::kFloat && t.size() == ShapeSize(norm_shape)) return t.data<float>();
  const std::vector<double> values = ExpandParam(t, norm_shape, name, ctx);
  storage.assign(values.begin(), values.end());
  return storage.data();
}

bool IsFloatType(int64_t t) {
  return t == static_cast<int64_t>(DataType::kFloat) || t == static_cast<int64_t>(DataType::kDouble) ||
         t == static_cast<int64_t>(DataType::kFloat16) || t == static_cast<int64_t>(DataType::kBFloat16);
}

template <bool kRms>
class RowNormalization final : public OpKernel {
 public:
  explicit RowNormalization(const KernelInfo& info)
      : axis_(info.GetIntOr("axis", -1)),
        epsilon_(info.GetFloatOr("epsilon", 1e-5f)),
        stash_type_(info.GetIntOr("stash_type", 1)),
        as_onnx_runtime_(!kRms && IsBetweenQuantizeNodes(info)) {
    if (!IsFloatType(stash_type_)) info.Fail(StrCat("stash_type ", stash_type_, " is not a floating-point type"));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& scale = ctx.required_input(1);
    const Tensor* bias = kRms ? nullptr : ctx.input(2);
    const int64_t rank = static_cast<int64_t>(x.rank());
    if (rank == 0) ctx.Fail("X must have rank >= 1");
    const int64_t axis = NormalizeAxis(axis_, rank);
    const Shape norm_shape(x.shape().begin() + axis, x.shape().end());
    const int64_t cols = ShapeSize(norm_shape);
    const int64_t rows = cols == 0 ? 0 : x.size() / cols;
    if (x.dtype() == DataType::kFloat && stash_type_ == static_cast<int64_t>(DataType::kFloat)) {
      ComputeFloat(ctx, x, scale, bias, axis, norm_shape, rows, cols);
      return;
    }
    const std::vector<double> w = ExpandParam(scale, norm_shape, "Scale", ctx);
    const std::vector<double> b = bias != nullptr ? ExpandParam(*bias, norm_shape, "B", ctx) : std::vector<double>();

    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.shape());
    Shape stat_shape = x.shape();
    for (int64_t d = axis; d < rank; ++d) stat_shape[d] = 1;
    Tensor* mean_out = nullptr;
    Tensor* inv_out = nullptr;
    if (!kRms && ctx.num_outputs() > 1 && ctx.has_output(1))
      mean_out = &ctx.AllocateOutput(1, static_cast<DataType>(stash_type_), stat_shape);
    if (!kRms && ctx.num_outputs() > 2 && ctx.has_output(2))
      inv_out = &ctx.AllocateOutput(2, static_cast<DataType>(stash_type_), stat_shape);
    std::vector<double> means(mean_out != nullptr ? rows : 0), invs(inv_out != nullptr ? rows : 0);

    Dispatch(FloatTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
      const std::vector<Acc> wa(w.begin(), w.end()), ba(b.begin(), b.end());
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      ThreadPool::For(ctx.thread_pool(), rows, static_cast<double>(cols) * 6.0, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const T* src = xp + r * cols;
          T* dst = yp + r * cols;
          // One pass: sum and sum of squares in double (exact enough for float inputs).
          double sum = 0, sum_sq = 0;
          for (int64_t i = 0; i < cols; ++i) {
            const double v = static_cast<double>(ToCompute(src[i]));
            sum += v;
            sum_sq += v * v;
          }
          const double n = static_cast<double>(cols);
          const double mean = kRms ? 0.0 : sum / n;
          const double var = std::max(0.0, sum_sq / n - mean * mean);
          const double inv = 1.0 / std::sqrt(var + static_cast<double>(epsilon_));
          // Statistics in double; the affine step in the compute type.
          const Acc mean_a = static_cast<Acc>(mean), inv_a = static_cast<Acc>(inv);
          if (ba.empty()) {
            for (int64_t i = 0; i < cols; ++i)
              dst[i] = FromCompute<T>((static_cast<Acc>(ToCompute(src[i])) - mean_a) * inv_a * wa[i]);
          } else {
            for (int64_t i = 0; i < cols; ++i)
              dst[i] = FromCompute<T>((static_cast<Acc>(ToCompute(src[i])) - mean_a) * inv_a * wa[i] + ba[i]);
          }
          if (!means.empty()) means[r] = mean;
          if (!invs.empty()) invs[r] = inv;
        }
      });
    });
    auto store = [&](const std::vector<double>& v, Tensor* t) {
      if (t == nullptr) return;
      Dispatch(FloatTypes{}, t->dtype(), ctx.node(), [&](auto tag) {
        using U = typename decltype(tag)::type;
        U* p = t->data<U>();
        for (size_t i = 0; i < v.size(); ++i) p[i] = FromCompute<U>(static_cast<ComputeType<U>>(v[i]));
      });
    };
    store(means, mean_out);
    store(invs, inv_out);
  }

 private:
  // Float input, float stash: linalg's row kernels, parameters used in place when they can be.
  void ComputeFloat(KernelContext& ctx, const Tensor& x, const Tensor& scale, const Tensor* bias, int64_t axis,
                    const Shape& norm_shape, int64_t rows, int64_t cols) const {
    std::vector<float> w_storage, b_storage;
    const float* w = FloatParam(scale, norm_shape, "Scale", ctx, w_storage);
    const float* b = bias != nullptr ? FloatParam(*bias, norm_shape, "B", ctx, b_storage) : nullptr;
    Tensor& y = ctx.AllocateOutput(0, DataType::kFloat, x.shape());
    Shape stat_shape = x.shape();
    for (size_t d = static_cast<size_t>(axis); d < stat_shape.size(); ++d) stat_shape[d] = 1;
    float* mean = nullptr;
    float* inv = nullptr;
    if (!kRms && ctx.num_outputs() > 1 && ctx.has_output(1))
      mean = ctx.AllocateOutput(1, DataType::kFloat, stat_shape).data<float>();
    if (!kRms && ctx.num_outputs() > 2 && ctx.has_output(2))
      inv = ctx.AllocateOutput(2, DataType::kFloat, stat_shape).data<float>();
    const float* xp = x.data<float>();
    float* yp = y.data<float>();
    const size_t n = static_cast<size_t>(cols);
    const float eps = epsilon_;
    ThreadPool::For(ctx.thread_pool(), rows, static_cast<double>(cols) * 2.0, [&](int64_t begin, int64_t end) {
      if (as_onnx_runtime_ && cols >= linalg::kLayerNormCenteredMinRow) {
        linalg::LayerNormRowsCentered(xp + begin * cols, yp + begin * cols, end - begin, cols, w, b, eps,
                                      mean ? mean + begin : nullptr, inv ? inv + begin : nullptr);
        return;
      }
      for (int64_t r = begin; r < end; ++r) {
        if constexpr (kRms)
          linalg::RmsNormRow(xp + r * cols, yp + r * cols, n, w, eps, nullptr);
        else
          linalg::LayerNormRow(xp + r * cols, yp + r * cols, n, w, b, eps, mean ? mean + r : nullptr,
                               inv ? inv + r : nullptr);
      }
    });
  }

  int64_t axis_;
  float epsilon_;
  int64_t stash_type_;
  // Fed by a DequantizeLinear or feeding a QuantizeLinear: ONNX Runtime's arithmetic, so its
  // codes are ONNX Runtime's (linalg::LayerNormRowsCentered).
  bool as_onnx_runtime_;
};

ONYX_CPU_KERNEL("LayerNormalization", 17, kOpsetMax, RowNormalization<false>);
ONYX_CPU_KERNEL("RMSNormalization", 23, kOpsetMax, RowNormalization<true>);

}  // namespace
}  // namespace onyx
