// The ai.onnx.preview.training optimizers (opset 1): Adagrad, Momentum (standard and
// Nesterov) and Adam. Inputs: learning rate R and update count T (scalars), then n tensors to
// optimize X, their gradients G and one or two accumulators; outputs: the new X's followed by
// the new accumulators. Computation is in double, rounded once to the tensors' type.
#include <cmath>

#include "base/type_traits.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

using OptimizerTypes = TypeList<float, double>;

double ReadScalar(const KernelContext& ctx, const Tensor& t, const char* what) {
  if (t.size() != 1) ctx.Fail(StrCat(what, " must be a scalar, got ", t.Describe()));
  double v = 0.0;
  Dispatch(TypeList<float, double, int64_t>{}, t.dtype(), ctx.node(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    v = static_cast<double>(*t.data<T>());
  });
  return v;
}

// Splits inputs 2.. into `groups` equal groups of n tensors of matching shapes and type.
size_t CheckGroups(const KernelContext& ctx, size_t groups) {
  const size_t rest = ctx.num_inputs() - 2;
  if (ctx.num_inputs() < 2 || rest % groups != 0 || rest == 0)
    ctx.Fail(StrCat("expected R, T and ", groups, " groups of n tensors; got ", ctx.num_inputs(), " inputs"));
  const size_t n = rest / groups;
  if (ctx.num_outputs() != n * (groups - 1)) ctx.Fail(StrCat("expected ", n * (groups - 1), " outputs"));
  for (size_t i = 0; i < n; ++i) {
    const Tensor& x = ctx.required_input(2 + i);
    for (size_t g = 1; g < groups; ++g) {
      const Tensor& o = ctx.required_input(2 + g * n + i);
      if (o.shape() != x.shape() || o.dtype() != x.dtype())
        ctx.Fail(
            StrCat("input ", 2 + g * n + i, " is ", o.Describe(), " but the tensor it goes with is ", x.Describe()));
    }
  }
  return n;
}

class Adagrad final : public OpKernel {
 public:
  explicit Adagrad(const KernelInfo& info)
      : decay_(info.GetFloatOr("decay_factor", 0.0f)),
        epsilon_(info.GetFloatOr("epsilon", 1e-6f)),
        norm_(info.GetFloatOr("norm_coefficient", 0.0f)) {}

  void Compute(KernelContext& ctx) const override {
    const double r = ReadScalar(ctx, ctx.required_input(0), "R");
    const double t = ReadScalar(ctx, ctx.required_input(1), "T");
    const size_t n = CheckGroups(ctx, 3);
    const double rate = r / (1.0 + t * decay_);
    for (size_t i = 0; i < n; ++i) {
      const Tensor& x = ctx.required_input(2 + i);
      const Tensor& g = ctx.required_input(2 + n + i);
      const Tensor& h = ctx.required_input(2 + 2 * n + i);
      Tensor& x_new = ctx.AllocateOutput(i, x.dtype(), x.shape());
      Tensor& h_new = ctx.AllocateOutput(n + i, x.dtype(), x.shape());
      Dispatch(OptimizerTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        for (int64_t k = 0; k < x.size(); ++k) {
          const double xv = x.data<T>()[k];
          const double gr = norm_ * xv + g.data<T>()[k];
          const double hv = h.data<T>()[k] + gr * gr;
          h_new.data<T>()[k] = static_cast<T>(hv);
          x_new.data<T>()[k] = static_cast<T>(xv - rate * gr / (std::sqrt(hv) + epsilon_));
        }
      });
    }
  }

 private:
  double decay_, epsilon_, norm_;
};

class Momentum final : public OpKernel {
 public:
  explicit Momentum(const KernelInfo& info)
      : alpha_(info.GetFloat("alpha")), beta_(info.GetFloat("beta")), norm_(info.GetFloat("norm_coefficient")) {
    const std::string mode = info.GetString("mode");
    if (mode != "standard" && mode != "nesterov")
      info.Fail(StrCat("mode must be standard or nesterov, got '", mode, "'"));
    nesterov_ = mode == "nesterov";
  }

  void Compute(KernelContext& ctx) const override {
    const double r = ReadScalar(ctx, ctx.required_input(0), "R");
    const double t = ReadScalar(ctx, ctx.required_input(1), "T");
    const size_t n = CheckGroups(ctx, 3);
    // The first update (T == 0) takes the whole gradient.
    const double beta = t > 0 ? beta_ : 1.0;
    for (size_t i = 0; i < n; ++i) {
      const Tensor& x = ctx.required_input(2 + i);
      const Tensor& g = ctx.required_input(2 + n + i);
      const Tensor& v = ctx.required_input(2 + 2 * n + i);
      Tensor& x_new = ctx.AllocateOutput(i, x.dtype(), x.shape());
      Tensor& v_new = ctx.AllocateOutput(n + i, x.dtype(), x.shape());
      Dispatch(OptimizerTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        for (int64_t k = 0; k < x.size(); ++k) {
          const double xv = x.data<T>()[k];
          const double gr = norm_ * xv + g.data<T>()[k];
          const double vv = alpha_ * v.data<T>()[k] + beta * gr;
          v_new.data<T>()[k] = static_cast<T>(vv);
          x_new.data<T>()[k] = static_cast<T>(nesterov_ ? xv - r * (gr + alpha_ * vv) : xv - r * vv);
        }
      });
    }
  }

 private:
  double alpha_, beta_, norm_;
  bool nesterov_ = false;
};

class Adam final : public OpKernel {
 public:
  explicit Adam(const KernelInfo& info)
      : alpha_(info.GetFloatOr("alpha", 0.9f)),
        beta_(info.GetFloatOr("beta", 0.999f)),
        epsilon_(info.GetFloatOr("epsilon", 1e-6f)),
        norm_(info.GetFloatOr("norm_coefficient", 0.0f)),
        norm_post_(info.GetFloatOr("norm_coefficient_post", 0.0f)) {}

  void Compute(KernelContext& ctx) const override {
    const double r = ReadScalar(ctx, ctx.required_input(0), "R");
    const double t = ReadScalar(ctx, ctx.required_input(1), "T");
    const size_t n = CheckGroups(ctx, 4);
    // Bias correction of both moments from the second update on.
    const double rate = t > 0 ? r * std::sqrt(1.0 - std::pow(beta_, t)) / (1.0 - std::pow(alpha_, t)) : r;
    for (size_t i = 0; i < n; ++i) {
      const Tensor& x = ctx.required_input(2 + i);
      const Tensor& g = ctx.required_input(2 + n + i);
      const Tensor& v = ctx.required_input(2 + 2 * n + i);
      const Tensor& h = ctx.required_input(2 + 3 * n + i);
      Tensor& x_new = ctx.AllocateOutput(i, x.dtype(), x.shape());
      Tensor& v_new = ctx.AllocateOutput(n + i, x.dtype(), x.shape());
      Tensor& h_new = ctx.AllocateOutput(2 * n + i, x.dtype(), x.shape());
      Dispatch(OptimizerTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        for (int64_t k = 0; k < x.size(); ++k) {
          const double xv = x.data<T>()[k];
          const double gr = norm_ * xv + g.data<T>()[k];
          const double vv = alpha_ * v.data<T>()[k] + (1.0 - alpha_) * gr;
          const double hv = beta_ * h.data<T>()[k] + (1.0 - beta_) * gr * gr;
          v_new.data<T>()[k] = static_cast<T>(vv);
          h_new.data<T>()[k] = static_cast<T>(hv);
          const double updated = xv - rate * vv / (std::sqrt(hv) + epsilon_);
          x_new.data<T>()[k] = static_cast<T>((1.0 - norm_post_) * updated);
        }
      });
    }
  }

 private:
  double alpha_, beta_, epsilon_, norm_, norm_post_;
};

ONYX_REGISTER_KERNEL("CPU", "ai.onnx.preview.training", "Adagrad", 1, kOpsetMax, Adagrad);
ONYX_REGISTER_KERNEL("CPU", "ai.onnx.preview.training", "Momentum", 1, kOpsetMax, Momentum);
ONYX_REGISTER_KERNEL("CPU", "ai.onnx.preview.training", "Adam", 1, kOpsetMax, Adam);

}  // namespace
}  // namespace onyx
