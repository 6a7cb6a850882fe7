// Two-input activations: PRelu (x, or slope * x where x < 0) and SwiGLU (opset 28:
// A * sigmoid(alpha * A) * B on same-shaped A and B).
//
// PRelu's slope: opsets 1-6 accept a one-element slope, a slope of X's shape, or a 1-D slope
// of X's channel count (dimension 1), as the exporters of that time produced; from opset 7 the
// slope broadcasts to X one way (numpy rules, output shape = X's shape).
#include <cmath>
#include <type_traits>

#include "base/type_traits.h"
#include "providers/cpu/kernels/math/elementwise.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

using PReluTypes = TypeList<float, double, Float16, BFloat16, int32_t, int64_t, uint32_t, uint64_t>;

class PRelu final : public OpKernel {
 public:
  explicit PRelu(const KernelInfo& info) : legacy_(info.opset() < 7) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& slope = ctx.required_input(1);
    if (x.dtype() != slope.dtype()) ctx.Fail("X and slope must have the same element type");
    const Shape slope_shape = SlopeShape(ctx, x.shape(), slope.shape());
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.shape());
    Dispatch(PReluTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      elementwise::BinaryLoop(ctx.thread_pool(), x.shape(), x.data<T>(), x.shape(), slope.data<T>(), slope_shape,
                              y.data<T>(), elementwise::kCheapCost, [](T xv, T sv) {
                                if constexpr (std::is_unsigned_v<T>) {
                                  return xv;
                                } else {
                                  const C v = ToCompute(xv);
                                  return v < C(0) ? FromCompute<T>(elementwise::WrapMul(ToCompute(sv), v)) : xv;
                                }
                              });
    });
  }

 private:
  // The slope's shape as it broadcasts onto X; fails naming the node when it cannot.
  Shape SlopeShape(const KernelContext& ctx, const Shape& x, const Shape& slope) const {
    if (legacy_) {
      int64_t count = 1;
      for (int64_t d : slope) count *= d;
      if (count == 1) return Shape{};
      if (slope == x) return slope;
      if (slope.size() == 1 && x.size() >= 2 && slope[0] == x[1]) {
        Shape channel(x.size() - 1, 1);  // [C, 1, ..., 1] lines up with X's dimension 1
        channel[0] = slope[0];
        return channel;
      }
    }
    Shape out;
    try {
      out = BroadcastShapes({x, slope});
    } catch (const Error& e) {
      ctx.Fail(e.what());
    }
    if (out != x) ctx.Fail("slope must broadcast to X's shape (unidirectional broadcasting)");
    return slope;
  }

  bool legacy_;
};

ONYX_CPU_KERNEL("PRelu", 1, 6, PRelu);
ONYX_CPU_KERNEL("PRelu", 7, kOpsetMax, PRelu);

class SwiGLU final : public OpKernel {
 public:
  explicit SwiGLU(const KernelInfo& info) : alpha_(info.GetFloatOr("alpha", 1.0f)) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    if (a.dtype() != b.dtype()) ctx.Fail("A and B must have the same element type");
    if (a.shape() != b.shape()) ctx.Fail("A and B must have the same shape (SwiGLU does not broadcast)");
    Tensor& y = ctx.AllocateOutput(0, a.dtype(), a.shape());
    Dispatch(FloatTypes{}, a.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      const C alpha = static_cast<C>(alpha_);
      elementwise::BinaryLoop(ctx.thread_pool(), a.shape(), a.data<T>(), a.shape(), b.data<T>(), b.shape(),
                              y.data<T>(), elementwise::kTranscendentalCost, [alpha](T av, T bv) {
                                const C g = ToCompute(av);
                                const C z = alpha * g;
                                // sigmoid(z), written to stay finite for large |z|
                                const C s = z >= C(0) ? C(1) / (C(1) + std::exp(-z)) : std::exp(z) / (C(1) + std::exp(z));
                                return FromCompute<T>(g * s * ToCompute(bv));
                              });
    });
  }

 private:
  float alpha_;
};

ONYX_CPU_KERNEL("SwiGLU", 28, kOpsetMax, SwiGLU);

}  // namespace
}  // namespace onyx
