// Add, Sub, Mul, Div with multidirectional broadcasting (opset 7+), for every numeric type.
// Float16/BFloat16 compute in float and round once.
#include <type_traits>

#include "base/type_traits.h"
#include "ops/broadcast.h"
#include "platform/thread_pool.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

enum class BinaryOp { kAdd, kSub, kMul, kDiv };

template <BinaryOp op, typename C>
inline C Apply(C a, C b) {
  if constexpr (op == BinaryOp::kAdd) return a + b;
  if constexpr (op == BinaryOp::kSub) return a - b;
  if constexpr (op == BinaryOp::kMul) return a * b;
  if constexpr (op == BinaryOp::kDiv) {
    if constexpr (std::is_integral_v<C>) {
      // ONNX leaves integer division by zero undefined; give 0 rather than trap.
      return b == 0 ? C(0) : static_cast<C>(a / b);
    } else {
      return a / b;
    }
  }
}

template <BinaryOp op>
class BinaryArithmetic final : public OpKernel {
 public:
  explicit BinaryArithmetic(const KernelInfo&) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    if (a.dtype() != b.dtype())
      ctx.Fail(StrCat("inputs have different element types ", DataTypeName(a.dtype()), " and ", DataTypeName(b.dtype())));
    const Shape out_shape = BroadcastShapes({a.shape(), b.shape()});
    Tensor& out = ctx.AllocateOutput(0, a.dtype(), out_shape);
    Dispatch(NumericTypes{}, a.dtype(), ctx.node().Describe(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      const T* pa = a.data<T>();
      const T* pb = b.data<T>();
      T* po = out.data<T>();
      ForEachBroadcastRun(out_shape, {a.shape(), b.shape()}, [&](const BroadcastRun& run) {
        const T* ra = pa + run.in[0];
        const T* rb = pb + run.in[1];
        T* ro = po + run.out;
        if (run.step[0] && run.step[1]) {
          for (int64_t i = 0; i < run.count; ++i) ro[i] = FromCompute<T>(Apply<op, C>(ToCompute(ra[i]), ToCompute(rb[i])));
        } else if (run.step[0]) {
          const C bv = ToCompute(rb[0]);
          for (int64_t i = 0; i < run.count; ++i) ro[i] = FromCompute<T>(Apply<op, C>(ToCompute(ra[i]), bv));
        } else if (run.step[1]) {
          const C av = ToCompute(ra[0]);
          for (int64_t i = 0; i < run.count; ++i) ro[i] = FromCompute<T>(Apply<op, C>(av, ToCompute(rb[i])));
        } else {
          const T v = FromCompute<T>(Apply<op, C>(ToCompute(ra[0]), ToCompute(rb[0])));
          for (int64_t i = 0; i < run.count; ++i) ro[i] = v;
        }
      });
    });
  }
};

ONYX_CPU_KERNEL("Add", 7, kOpsetMax, BinaryArithmetic<BinaryOp::kAdd>);
ONYX_CPU_KERNEL("Sub", 7, kOpsetMax, BinaryArithmetic<BinaryOp::kSub>);
ONYX_CPU_KERNEL("Mul", 7, kOpsetMax, BinaryArithmetic<BinaryOp::kMul>);
ONYX_CPU_KERNEL("Div", 7, kOpsetMax, BinaryArithmetic<BinaryOp::kDiv>);

}  // namespace
}  // namespace onyx
