// StringConcat (opset 20): element-wise concatenation of two string tensors with numpy
// broadcasting.
#include "ops/broadcast.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

class StringConcat final : public OpKernel {
 public:
  explicit StringConcat(const KernelInfo&) {}
  void Compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    if (a.dtype() != DataType::kString || b.dtype() != DataType::kString) ctx.Fail("both inputs must be strings");
    const Shape out_shape = BroadcastShapes({a.shape(), b.shape()});
    Tensor& out = ctx.AllocateOutput(0, DataType::kString, out_shape);
    const std::string* pa = a.data<std::string>();
    const std::string* pb = b.data<std::string>();
    std::string* po = out.data<std::string>();
    ForEachBroadcastRun(out_shape, {a.shape(), b.shape()}, [&](const BroadcastRun& run) {
      for (int64_t i = 0; i < run.count; ++i) {
        const std::string& x = pa[run.in[0] + i * run.step[0]];
        const std::string& y = pb[run.in[1] + i * run.step[1]];
        std::string& r = po[run.out + i];
        r.reserve(x.size() + y.size());
        r.assign(x);
        r.append(y);
      }
    });
  }
};

ONYX_CPU_KERNEL("StringConcat", 20, kOpsetMax, StringConcat);

}  // namespace
}  // namespace onyx
