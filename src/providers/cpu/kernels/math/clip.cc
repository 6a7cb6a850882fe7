// Clip: y = min(max(x, min), max). Opsets 1-10 take the bounds as float attributes (opset 1: no
// bound when absent; opset 6: -FLT_MAX / FLT_MAX by default). From opset 11 they are optional
// scalar inputs of the input's type (integer types from opset 12). When min > max every value
// becomes max, as the spec says; NaN stays NaN.
#include <limits>
#include <optional>

#include "base/type_traits.h"
#include "providers/cpu/kernels/math/elementwise.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

template <typename C>
inline C ClampValue(C v, C lo, C hi) {
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}

class ClipAttributes final : public OpKernel {
 public:
  explicit ClipAttributes(const KernelInfo& info) {
    const bool opset1 = info.opset() < 6;
    const float unbounded = opset1 ? std::numeric_limits<float>::infinity() : std::numeric_limits<float>::max();
    min_ = info.GetFloatOr("min", -unbounded);
    max_ = info.GetFloatOr("max", unbounded);
  }
  uint32_t InPlaceInputsFor(size_t output) const override { return output == 0 ? 1u : 0u; }  // pointwise

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.shape());
    Dispatch(FloatTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      const C lo = static_cast<C>(min_), hi = static_cast<C>(max_);
      elementwise::Map(ctx.thread_pool(), x.data<T>(), y.data<T>(), x.size(), elementwise::kCheapCost,
                       [lo, hi](T v) { return FromCompute<T>(ClampValue<C>(ToCompute(v), lo, hi)); });
    });
  }

 private:
  float min_;
  float max_;
};

class ClipInputs final : public OpKernel {
 public:
  explicit ClipInputs(const KernelInfo&) {}
  uint32_t InPlaceInputsFor(size_t output) const override { return output == 0 ? 1u : 0u; }  // pointwise

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor* min_t = ctx.input(1);
    const Tensor* max_t = ctx.input(2);
    for (const Tensor* bound : {min_t, max_t}) {
      if (bound == nullptr) continue;
      if (bound->dtype() != x.dtype()) ctx.Fail("min and max must have the input's element type");
      if (bound->size() != 1) ctx.Fail("min and max must be scalars");
    }
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.shape());
    Dispatch(NumericTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      // An absent bound leaves that side alone (infinities stay infinities).
      using Limits = std::numeric_limits<C>;
      const C lo = min_t ? ToCompute(min_t->data<T>()[0]) : (Limits::has_infinity ? -Limits::infinity() : Limits::lowest());
      const C hi = max_t ? ToCompute(max_t->data<T>()[0]) : (Limits::has_infinity ? Limits::infinity() : Limits::max());
      elementwise::Map(ctx.thread_pool(), x.data<T>(), y.data<T>(), x.size(), elementwise::kCheapCost,
                       [lo, hi](T v) { return FromCompute<T>(ClampValue<C>(ToCompute(v), lo, hi)); });
    });
  }
};

ONYX_CPU_KERNEL("Clip", 1, 5, ClipAttributes);
ONYX_CPU_KERNEL("Clip", 6, 10, ClipAttributes);
ONYX_CPU_KERNEL("Clip", 11, kOpsetMax, ClipInputs);

}  // namespace
}  // namespace onyx
