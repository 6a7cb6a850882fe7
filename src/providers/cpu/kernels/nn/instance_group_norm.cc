// InstanceNormalization and GroupNormalization: normalize each (image, channel group) slice
// of X (N, C, D1, ...) by its own mean and variance, then apply a per-channel (or, for
// GroupNormalization-18, per-group) scale and bias. Instance norm is group norm with C groups.
#include <cmath>
#include <vector>

#include "base/type_traits.h"
#include "platform/thread_pool.h"
#include "providers/cpu/kernels/nn/norm_params.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

// Normalizes x [N, C, inner] in groups of C / groups channels. scale/bias hold one value per
// channel (per_channel) or per group.
void GroupNormalize(const Tensor& x, Tensor& y, int64_t groups, const std::vector<double>& scale,
                    const std::vector<double>& bias, bool per_channel, double epsilon, const KernelContext& ctx) {
  const int64_t batch = x.dim(0), channels = x.dim(1);
  const int64_t inner = batch * channels == 0 ? 0 : x.size() / (batch * channels);
  const int64_t cpg = channels / groups;
  const int64_t slice = cpg * inner;
  Dispatch(FloatTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const T* xp = x.data<T>();
    T* yp = y.data<T>();
    ThreadPool::For(ctx.thread_pool(), batch * groups, static_cast<double>(slice) * 4.0, [&](int64_t begin, int64_t end) {
      for (int64_t j = begin; j < end; ++j) {
        const T* src = xp + j * slice;
        T* dst = yp + j * slice;
        double sum = 0;
        for (int64_t i = 0; i < slice; ++i) sum += static_cast<double>(ToCompute(src[i]));
        const double mean = slice > 0 ? sum / static_cast<double>(slice) : 0.0;
        double sq = 0;
        for (int64_t i = 0; i < slice; ++i) {
          const double d = static_cast<double>(ToCompute(src[i])) - mean;
          sq += d * d;
        }
        const double inv_std = 1.0 / std::sqrt((slice > 0 ? sq / static_cast<double>(slice) : 0.0) + epsilon);
        const int64_t g = j % groups;
        for (int64_t c = 0; c < cpg; ++c) {
          const int64_t p = per_channel ? g * cpg + c : g;
          const Acc a = static_cast<Acc>(scale[p] * inv_std);
          const Acc b = static_cast<Acc>(bias[p] - mean * scale[p] * inv_std);
          const T* s = src + c * inner;
          T* d = dst + c * inner;
          for (int64_t i = 0; i < inner; ++i)
            d[i] = FromCompute<T>(static_cast<ComputeType<T>>(static_cast<Acc>(ToCompute(s[i])) * a + b));
        }
      }
    });
  });
}

class InstanceNormalization final : public OpKernel {
 public:
  explicit InstanceNormalization(const KernelInfo& info) : epsilon_(info.GetFloatOr("epsilon", 1e-5f)) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& scale = ctx.required_input(1);
    const Tensor& bias = ctx.required_input(2);
    if (x.rank() < 2) ctx.Fail("input must have rank >= 2 (N, C, ...)");
    const int64_t channels = x.dim(1);
    if (scale.dtype() != x.dtype() || bias.dtype() != x.dtype())
      ctx.Fail("scale and B must have the input's element type");
    if (scale.size() != channels || bias.size() != channels)
      ctx.Fail(StrCat("scale and B must hold one value per channel (", channels, ")"));
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.shape());
    if (y.size() == 0) return;
    GroupNormalize(x, y, channels, nn::ParamsAsDouble(scale, ctx), nn::ParamsAsDouble(bias, ctx), true, epsilon_,
                   ctx);
  }

 private:
  float epsilon_;
};

class GroupNormalization final : public OpKernel {
 public:
  explicit GroupNormalization(const KernelInfo& info)
      : per_channel_(info.opset() >= 21),
        epsilon_(info.GetFloatOr("epsilon", 1e-5f)),
        groups_(info.GetInt("num_groups")) {
    if (groups_ < 1) info.Fail(StrCat("num_groups must be >= 1, got ", groups_));
    const int64_t stash = info.GetIntOr("stash_type", 1);
    if (stash != static_cast<int64_t>(DataType::kFloat) && stash != static_cast<int64_t>(DataType::kDouble))
      info.Fail(StrCat("stash_type ", stash, " is not supported (float or double)"));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& scale = ctx.required_input(1);
    const Tensor& bias = ctx.required_input(2);
    if (x.rank() < 2) ctx.Fail("input must have rank >= 2 (N, C, ...)");
    const int64_t channels = x.dim(1);
    if (channels % groups_ != 0) ctx.Fail(StrCat("channels (", channels, ") are not divisible by num_groups ", groups_));
    // Opset 18 takes one scale/bias per group, opset 21 one per channel.
    const int64_t want = per_channel_ ? channels : groups_;
    if (scale.size() != want || bias.size() != want)
      ctx.Fail(StrCat("scale and bias must hold ", want, per_channel_ ? " values (one per channel)" : " values (one per group)"));
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.shape());
    if (y.size() == 0) return;
    GroupNormalize(x, y, groups_, nn::ParamsAsDouble(scale, ctx), nn::ParamsAsDouble(bias, ctx), per_channel_,
                   epsilon_, ctx);
  }

 private:
  bool per_channel_;
  float epsilon_;
  int64_t groups_;
};

ONYX_CPU_KERNEL("InstanceNormalization", 1, 5, InstanceNormalization);  // consumed_inputs, ignored
ONYX_CPU_KERNEL("InstanceNormalization", 6, 21, InstanceNormalization);
ONYX_CPU_KERNEL("InstanceNormalization", 22, kOpsetMax, InstanceNormalization);
ONYX_CPU_KERNEL("GroupNormalization", 18, 20, GroupNormalization);  // per-group scale/bias
ONYX_CPU_KERNEL("GroupNormalization", 21, kOpsetMax, GroupNormalization);  // per-channel, stash_type

}  // namespace
}  // namespace onyx
