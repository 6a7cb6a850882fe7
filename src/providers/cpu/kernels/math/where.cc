// Where(condition, X, Y): X where the condition holds, else Y, with numpy broadcasting of all
// three inputs. Any element type, strings included (bfloat16 is listed from opset 16).
#include <string>

#include "base/type_traits.h"
#include "providers/cpu/kernels/math/elementwise.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

class Where final : public OpKernel {
 public:
  explicit Where(const KernelInfo&) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& cond = ctx.required_input(0);
    const Tensor& x = ctx.required_input(1);
    const Tensor& y = ctx.required_input(2);
    if (cond.dtype() != DataType::kBool) ctx.Fail("condition must be a bool tensor");
    if (x.dtype() != y.dtype()) ctx.Fail("X and Y must have the same element type");
    Shape out_shape;
    try {
      out_shape = BroadcastShapes({cond.shape(), x.shape(), y.shape()});
    } catch (const Error& e) {
      ctx.Fail(e.what());
    }
    Tensor& out = ctx.AllocateOutput(0, x.dtype(), out_shape);
    Dispatch(AllTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      elementwise::TernaryLoop(ctx.thread_pool(), out_shape, cond.data<bool>(), cond.shape(), x.data<T>(), x.shape(),
                               y.data<T>(), y.shape(), out.data<T>(), elementwise::kCheapCost,
                               [](bool c, const T& a, const T& b) { return c ? a : b; });
    });
  }
};

ONYX_CPU_KERNEL("Where", 9, 15, Where);
ONYX_CPU_KERNEL("Where", 16, kOpsetMax, Where);

}  // namespace
}  // namespace onyx
