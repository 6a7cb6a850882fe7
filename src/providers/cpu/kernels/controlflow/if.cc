// If: runs then_branch or else_branch and forwards the branch's outputs. The opsets differ only
// in what the branches may return: tensors (1-12), also sequences (13-15), also optionals (16+).
#include "providers/kernel.h"

namespace onyx {
namespace {

class If final : public OpKernel {
 public:
  explicit If(const KernelInfo& info)
      : then_(info.GetSubgraph("then_branch")), else_(info.GetSubgraph("else_branch")), opset_(info.opset()) {
    if (!then_.input_names().empty() || !else_.input_names().empty())
      info.Fail("then_branch and else_branch must not have inputs");
    if (then_.output_names().size() != else_.output_names().size())
      info.Fail(StrCat("then_branch has ", then_.output_names().size(), " outputs but else_branch has ",
                       else_.output_names().size()));
    if (then_.output_names().size() != info.num_outputs())
      info.Fail(
          StrCat("the node has ", info.num_outputs(), " outputs but its branches have ", then_.output_names().size()));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& cond = ctx.required_input(0);
    if (cond.dtype() != DataType::kBool || cond.size() != 1)
      ctx.Fail("cond must be a bool tensor with a single element");
    const bool take_then = *cond.data<bool>();
    std::vector<Value> outputs = ctx.RunSubgraph(take_then ? then_ : else_, {});
    for (size_t i = 0; i < outputs.size(); ++i) {
      const Value& v = outputs[i];
      if (opset_ < 13 && !v.is_tensor())
        ctx.Fail(StrCat("branch output ", i, " is ", v.Describe(), "; If-", opset_, " branches return tensors"));
      if (opset_ < 16 && v.is_none())
        ctx.Fail(StrCat("branch output ", i, " is an empty optional; If-", opset_, " does not allow optionals"));
      ctx.SetOutput(i, v);
    }
  }

 private:
  const Subgraph& then_;
  const Subgraph& else_;
  int opset_;
};

ONYX_CPU_KERNEL("If", 1, 10, If);
ONYX_CPU_KERNEL("If", 11, 12, If);
ONYX_CPU_KERNEL("If", 13, 15, If);
ONYX_CPU_KERNEL("If", 16, kOpsetMax, If);

}  // namespace
}  // namespace onyx
