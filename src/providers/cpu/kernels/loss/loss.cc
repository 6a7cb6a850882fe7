// NegativeLogLikelihoodLoss (opsets 12, 13, 22) and SoftmaxCrossEntropyLoss (opsets 12, 13).
//
// input [N, C, d1..dk], target [N, d1..dk] (int32/int64), optional weight [C].
// loss[n, d] = -input[n, target[n, d], d] * weight[target[n, d]], 0 where target == ignore_index.
// reduction "none" keeps that shape, "sum" adds it up, "mean" divides the sum by the total weight
// of the targets not ignored. SoftmaxCrossEntropyLoss applies it to log_softmax(scores, axis 1),
// which it can also output. Computes in double and rounds once.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "base/type_traits.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

enum class Reduction { kNone, kSum, kMean };

Reduction ParseReduction(const KernelInfo& info) {
  const std::string r = info.GetStringOr("reduction", "mean");
  if (r == "none") return Reduction::kNone;
  if (r == "sum") return Reduction::kSum;
  if (r == "mean") return Reduction::kMean;
  info.Fail(StrCat("reduction must be none, sum or mean, got '", r, "'"));
}

using LossTypes = TypeList<float, double, Float16, BFloat16>;

// Shapes and target indices, validated: [N, C, D] with D the product of d1..dk.
struct LossGeometry {
  int64_t n = 0, c = 0, d = 1;
  std::vector<int64_t> targets;  // N * D, each in [0, C) or equal to ignore_index
};

LossGeometry CheckInputs(KernelContext& ctx, const Tensor& x, const Tensor& target, const Tensor* weight,
                         const std::optional<int64_t>& ignore_index) {
  if (x.rank() < 2) ctx.Fail("input must have rank >= 2 ([N, C, ...])");
  if (target.rank() != x.rank() - 1) ctx.Fail("target must have rank one less than input");
  LossGeometry g;
  g.n = x.dim(0);
  g.c = x.dim(1);
  if (target.dim(0) != g.n) ctx.Fail("target and input disagree on N");
  for (size_t i = 2; i < x.rank(); ++i) {
    if (target.dim(i - 1) != x.dim(i)) ctx.Fail("target's dims must match input's dims after C");
    g.d *= x.dim(i);
  }
  if (weight && (weight->rank() != 1 || weight->dim(0) != g.c)) ctx.Fail("weight must be a 1-D tensor of C elements");
  if (weight && weight->dtype() != x.dtype()) ctx.Fail("weight must have the input's element type");
  g.targets.resize(static_cast<size_t>(target.size()));
  if (target.dtype() == DataType::kInt64)
    g.targets.assign(target.data<int64_t>(), target.data<int64_t>() + target.size());
  else if (target.dtype() == DataType::kInt32)
    g.targets.assign(target.data<int32_t>(), target.data<int32_t>() + target.size());
  else
    ctx.Fail(StrCat("target must be int32 or int64, got ", DataTypeName(target.dtype())));
  for (int64_t t : g.targets)
    if ((!ignore_index || t != *ignore_index) && (t < 0 || t >= g.c))
      ctx.Fail(StrCat("target value ", t, " is outside [0, ", g.c, ")"));
  return g;
}

// The loss from log-probabilities `logp` ([N, C, D], double) into output 0.
template <typename T>
void NllFromLogProb(KernelContext& ctx, const std::vector<double>& logp, const LossGeometry& g, const T* weight,
                    const std::optional<int64_t>& ignore_index, Reduction reduction, const Shape& target_shape) {
  std::vector<double> loss(static_cast<size_t>(g.n * g.d));
  double total = 0.0, total_weight = 0.0;
  for (int64_t i = 0; i < g.n; ++i)
    for (int64_t j = 0; j < g.d; ++j) {
      const int64_t t = g.targets[i * g.d + j];
      double l = 0.0, w = 0.0;
      if (!ignore_index || t != *ignore_index) {
        w = weight ? static_cast<double>(ToCompute(weight[t])) : 1.0;
        l = -logp[(i * g.c + t) * g.d + j] * w;
      }
      loss[i * g.d + j] = l;
      total += l;
      total_weight += w;
    }
  if (reduction == Reduction::kNone) {
    Tensor& y = ctx.AllocateOutput(0, DataTypeOf<T>(), target_shape);
    for (size_t i = 0; i < loss.size(); ++i) y.data<T>()[i] = FromCompute<T>(static_cast<ComputeType<T>>(loss[i]));
    return;
  }
  const double v = reduction == Reduction::kSum ? total : total / total_weight;
  Tensor& y = ctx.AllocateOutput(0, DataTypeOf<T>(), {});
  y.data<T>()[0] = FromCompute<T>(static_cast<ComputeType<T>>(v));
}

std::optional<int64_t> ParseIgnoreIndex(const KernelInfo& info) {
  if (!info.HasAttr("ignore_index")) return std::nullopt;
  return info.GetInt("ignore_index");
}

class NegativeLogLikelihoodLoss final : public OpKernel {
 public:
  explicit NegativeLogLikelihoodLoss(const KernelInfo& info)
      : reduction_(ParseReduction(info)), ignore_index_(ParseIgnoreIndex(info)) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& target = ctx.required_input(1);
    const Tensor* weight = ctx.input(2);
    const LossGeometry g = CheckInputs(ctx, x, target, weight, ignore_index_);
    Dispatch(LossTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      std::vector<double> logp(static_cast<size_t>(x.size()));
      for (int64_t i = 0; i < x.size(); ++i) logp[i] = static_cast<double>(ToCompute(x.data<T>()[i]));
      NllFromLogProb<T>(ctx, logp, g, weight ? weight->data<T>() : nullptr, ignore_index_, reduction_, target.shape());
    });
  }

 private:
  Reduction reduction_;
  std::optional<int64_t> ignore_index_;
};

class SoftmaxCrossEntropyLoss final : public OpKernel {
 public:
  explicit SoftmaxCrossEntropyLoss(const KernelInfo& info)
      : reduction_(ParseReduction(info)), ignore_index_(ParseIgnoreIndex(info)) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& target = ctx.required_input(1);
    const Tensor* weight = ctx.input(2);
    const LossGeometry g = CheckInputs(ctx, x, target, weight, ignore_index_);
    Dispatch(LossTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      // log_softmax over C for every (n, d).
      std::vector<double> logp(static_cast<size_t>(x.size()));
      for (int64_t i = 0; i < g.n; ++i)
        for (int64_t j = 0; j < g.d; ++j) {
          const int64_t base = i * g.c * g.d + j;
          double m = -std::numeric_limits<double>::infinity();
          for (int64_t c = 0; c < g.c; ++c) m = std::max(m, static_cast<double>(ToCompute(px[base + c * g.d])));
          double sum = 0.0;
          for (int64_t c = 0; c < g.c; ++c) sum += std::exp(static_cast<double>(ToCompute(px[base + c * g.d])) - m);
          const double lse = m + std::log(sum);
          for (int64_t c = 0; c < g.c; ++c)
            logp[base + c * g.d] = static_cast<double>(ToCompute(px[base + c * g.d])) - lse;
        }
      NllFromLogProb<T>(ctx, logp, g, weight ? weight->data<T>() : nullptr, ignore_index_, reduction_, target.shape());
      if (ctx.has_output(1)) {
        Tensor& lp = ctx.AllocateOutput(1, x.dtype(), x.shape());
        for (int64_t i = 0; i < x.size(); ++i) lp.data<T>()[i] = FromCompute<T>(static_cast<ComputeType<T>>(logp[i]));
      }
    });
  }

 private:
  Reduction reduction_;
  std::optional<int64_t> ignore_index_;
};

ONYX_CPU_KERNEL("NegativeLogLikelihoodLoss", 12, 12, NegativeLogLikelihoodLoss);
ONYX_CPU_KERNEL("NegativeLogLikelihoodLoss", 13, 21, NegativeLogLikelihoodLoss);
ONYX_CPU_KERNEL("NegativeLogLikelihoodLoss", 22, kOpsetMax, NegativeLogLikelihoodLoss);
ONYX_CPU_KERNEL("SoftmaxCrossEntropyLoss", 12, 12, SoftmaxCrossEntropyLoss);
ONYX_CPU_KERNEL("SoftmaxCrossEntropyLoss", 13, kOpsetMax, SoftmaxCrossEntropyLoss);

}  // namespace
}  // namespace onyx
