// Identity: the output shares the input's value (tensors, sequences and optionals alike).
#include "providers/kernel.h"

namespace onyx {
namespace {

class Identity final : public OpKernel {
 public:
  explicit Identity(const KernelInfo&) {}
  void Compute(KernelContext& ctx) const override {
    const Value* in = ctx.input_value(0);
    if (in == nullptr) ctx.Fail("input is missing");
    ctx.SetOutput(0, *in);
  }
};

ONYX_CPU_KERNEL("Identity", 1, kOpsetMax, Identity);

}  // namespace
}  // namespace onyx
