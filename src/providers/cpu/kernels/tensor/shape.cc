// Shape (with start/end from opset 15) and Size: metadata of the input as int64 tensors.
#include <algorithm>

#include "providers/cpu/kernels/tensor/tensor_util.h"

namespace onyx {
namespace tensor_kernels {
namespace {

class ShapeOp final : public OpKernel {
 public:
  explicit ShapeOp(const KernelInfo& info) {
    if (info.opset() >= 15) {
      start_ = info.GetIntOr("start", 0);
      has_end_ = info.HasAttr("end");
      end_ = info.GetIntOr("end", 0);
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Value* v = ctx.input_value(0);
    if (v == nullptr || !v->is_tensor()) ctx.Fail("input must be a tensor");
    const Shape& shape = v->tensor().shape();
    const auto r = static_cast<int64_t>(shape.size());
    // Out-of-range start/end clamp to [0, r].
    auto clamp = [r](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + r : i, 0, r); };
    const int64_t begin = clamp(start_);
    const int64_t end = has_end_ ? clamp(end_) : r;
    const int64_t n = std::max<int64_t>(0, end - begin);
    Tensor& y = ctx.AllocateOutput(0, DataType::kInt64, {n});
    for (int64_t i = 0; i < n; ++i) y.data<int64_t>()[i] = shape[static_cast<size_t>(begin + i)];
  }

 private:
  int64_t start_ = 0;
  int64_t end_ = 0;
  bool has_end_ = false;
};

class Size final : public OpKernel {
 public:
  explicit Size(const KernelInfo&) {}
  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.AllocateOutput(0, DataType::kInt64, {});
    *y.data<int64_t>() = x.size();
  }
};

ONYX_CPU_KERNEL("Shape", 1, 14, ShapeOp);
ONYX_CPU_KERNEL("Shape", 15, kOpsetMax, ShapeOp);  // + start / end
ONYX_CPU_KERNEL("Size", 1, kOpsetMax, Size);

}  // namespace
}  // namespace tensor_kernels
}  // namespace onyx
