// BatchNormalization, every opset. Inference normalizes with the given mean/var; training
// (opset 14+: training_mode = 1; earlier: when the statistics outputs are requested, and for
// opset < 7 only with is_test = 0) normalizes with the batch statistics and emits the updated
// running statistics. spatial = 0 (opset < 9) keeps one statistic per (C, D1, ...) element.
// Opset 15 lets scale/B and mean/var have their own float types.
#include <cmath>
#include <vector>

#include "base/type_traits.h"
#include "platform/thread_pool.h"
#include "providers/cpu/kernels/nn/norm_params.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

void StoreDoubles(const std::vector<double>& v, Tensor& t, const KernelContext& ctx) {
  Dispatch(FloatTypes{}, t.dtype(), ctx.node(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data<T>();
    for (size_t i = 0; i < v.size(); ++i) p[i] = FromCompute<T>(static_cast<ComputeType<T>>(v[i]));
  });
}

class BatchNormalization final : public OpKernel {
 public:
  explicit BatchNormalization(const KernelInfo& info)
      : opset_(info.opset()),
        epsilon_(info.GetFloatOr("epsilon", 1e-5f)),
        momentum_(info.GetFloatOr("momentum", 0.9f)),
        spatial_(info.opset() < 9 ? info.GetIntOr("spatial", 1) != 0 : true) {
    if (opset_ >= 14) {
      training_ = info.GetIntOr("training_mode", 0) != 0;
    } else {
      training_ = info.num_outputs() > 1;
      if (opset_ < 7 && info.GetIntOr("is_test", 0) != 0) training_ = false;
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    if (x.rank() < 2) ctx.Fail("X must have rank >= 2 (N, C, ...)");
    const int64_t batch = x.dim(0), channels = x.dim(1);
    const int64_t inner = batch * channels == 0 ? 0 : x.size() / (batch * channels);
    // Per-channel parameters, or per (C, D1, ...) element when spatial = 0.
    const int64_t params = spatial_ ? channels : channels * inner;
    const int64_t plane = spatial_ ? inner : 1;  // elements sharing one parameter, per image
    const char* names[] = {"scale", "B", "mean", "var"};
    std::vector<double> p[4];
    for (int i = 0; i < 4; ++i) {
      const Tensor& t = ctx.required_input(static_cast<size_t>(i + 1));
      if (t.size() != params)
        ctx.Fail(StrCat(names[i], " has ", t.size(), " elements, expected ", params,
                        spatial_ ? " (one per channel)" : " (one per C x D1 x ... element)"));
      if (opset_ < 15 && i < 2 && t.dtype() != x.dtype()) ctx.Fail(StrCat(names[i], " must have X's element type"));
      p[i] = nn::ParamsAsDouble(t, ctx);
    }
    const std::vector<double>& scale = p[0];
    const std::vector<double>& bias = p[1];
    std::vector<double> mean = p[2], var = p[3];

    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.shape());
    if (training_) {
      std::vector<double> batch_mean(params, 0.0), batch_var(params, 0.0);
      Statistics(x, batch, params, plane, batch_mean, batch_var, ctx);
      Normalize(x, y, batch, params, plane, scale, bias, batch_mean, batch_var, ctx);
      std::vector<double> run_mean(params), run_var(params);
      for (int64_t c = 0; c < params; ++c) {
        run_mean[c] = mean[c] * momentum_ + batch_mean[c] * (1.0 - momentum_);
        run_var[c] = var[c] * momentum_ + batch_var[c] * (1.0 - momentum_);
      }
      const Tensor& mean_in = ctx.required_input(3);
      const Tensor& var_in = ctx.required_input(4);
      // Outputs: opset 14+ (Y, running_mean, running_var); earlier (Y, mean, var, saved_mean,
      // saved_var) with the batch mean and, as ONNX Runtime gives it, the batch's inverse
      // standard deviation 1 / sqrt(var + epsilon) as saved_var.
      std::vector<double> saved_inv_std(params);
      for (int64_t c = 0; c < params; ++c) saved_inv_std[c] = 1.0 / std::sqrt(batch_var[c] + static_cast<double>(epsilon_));
      const std::vector<double>* outs[] = {&run_mean, &run_var, &batch_mean, &saved_inv_std};
      const Tensor* shapes[] = {&mean_in, &var_in, &mean_in, &var_in};
      const size_t n_stats = opset_ >= 14 ? 2 : 4;
      for (size_t i = 0; i < n_stats && i + 1 < ctx.num_outputs(); ++i) {
        if (!ctx.has_output(i + 1)) continue;
        Tensor& out = ctx.AllocateOutput(i + 1, shapes[i]->dtype(), shapes[i]->shape());
        StoreDoubles(*outs[i], out, ctx);
      }
    } else {
      Normalize(x, y, batch, params, plane, scale, bias, mean, var, ctx);
      // Statistics outputs declared in inference mode carry the running statistics unchanged.
      for (size_t i = 1; i < ctx.num_outputs(); ++i) {
        if (!ctx.has_output(i)) continue;
        ctx.SetOutput(i, Value(ctx.required_input(i % 2 == 1 ? 3 : 4)));
      }
    }
  }

 private:
  // Mean and population variance of every parameter slot over the batch (and its plane).
  static void Statistics(const Tensor& x, int64_t batch, int64_t params, int64_t plane, std::vector<double>& mean,
                         std::vector<double>& var, const KernelContext& ctx) {
    Dispatch(FloatTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* xp = x.data<T>();
      const double count = static_cast<double>(batch * plane);
      ThreadPool::For(ctx.thread_pool(), params, static_cast<double>(batch * plane) * 2.0, [&](int64_t b, int64_t e) {
        for (int64_t c = b; c < e; ++c) {
          double sum = 0;
          for (int64_t n = 0; n < batch; ++n) {
            const T* src = xp + (n * params + c) * plane;
            for (int64_t i = 0; i < plane; ++i) sum += static_cast<double>(ToCompute(src[i]));
          }
          const double m = count > 0 ? sum / count : 0.0;
          double sq = 0;
          for (int64_t n = 0; n < batch; ++n) {
            const T* src = xp + (n * params + c) * plane;
            for (int64_t i = 0; i < plane; ++i) {
              const double d = static_cast<double>(ToCompute(src[i])) - m;
              sq += d * d;
            }
          }
          mean[c] = m;
          var[c] = count > 0 ? sq / count : 0.0;
        }
      });
    });
  }

  // y = scale * (x - mean) / sqrt(var + epsilon) + bias, folded into y = x * a + b per slot.
  void Normalize(const Tensor& x, Tensor& y, int64_t batch, int64_t params, int64_t plane,
                 const std::vector<double>& scale, const std::vector<double>& bias, const std::vector<double>& mean,
                 const std::vector<double>& var, const KernelContext& ctx) const {
    std::vector<double> a(params), b(params);
    for (int64_t c = 0; c < params; ++c) {
      a[c] = scale[c] / std::sqrt(var[c] + static_cast<double>(epsilon_));
      b[c] = bias[c] - mean[c] * a[c];
    }
    Dispatch(FloatTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      ThreadPool::For(ctx.thread_pool(), batch * params, static_cast<double>(plane) * 2.0, [&](int64_t begin, int64_t end) {
        for (int64_t j = begin; j < end; ++j) {
          const int64_t c = j % params;
          const Acc ac = static_cast<Acc>(a[c]), bc = static_cast<Acc>(b[c]);
          const T* src = xp + j * plane;
          T* dst = yp + j * plane;
          for (int64_t i = 0; i < plane; ++i)
            dst[i] = FromCompute<T>(static_cast<ComputeType<T>>(static_cast<Acc>(ToCompute(src[i])) * ac + bc));
        }
      });
    });
  }

  int opset_;
  float epsilon_;
  float momentum_;
  bool spatial_;
  bool training_ = false;
};

// 1-5: consumed_inputs/is_test/spatial; 6: is_test/spatial; 7-8: spatial, mode from outputs;
// 9-13: per-channel only; 14: training_mode attribute; 15: separate types for scale/B and mean/var.
ONYX_CPU_KERNEL("BatchNormalization", 1, 5, BatchNormalization);
ONYX_CPU_KERNEL("BatchNormalization", 6, 6, BatchNormalization);
ONYX_CPU_KERNEL("BatchNormalization", 7, 8, BatchNormalization);
ONYX_CPU_KERNEL("BatchNormalization", 9, 13, BatchNormalization);
ONYX_CPU_KERNEL("BatchNormalization", 14, 14, BatchNormalization);
ONYX_CPU_KERNEL("BatchNormalization", 15, kOpsetMax, BatchNormalization);

}  // namespace
}  // namespace onyx
