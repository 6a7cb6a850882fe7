// MaxUnpool (opsets 9, 11, 22): scatters X into a zero tensor at the flat positions given by
// Indices (as MaxPool produced them) in the unpooled shape (in - 1) * stride + kernel - pads.
// The optional output_shape input may enlarge that shape (as ONNX's reference does).
#include <vector>

#include "base/type_traits.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

class MaxUnpool final : public OpKernel {
 public:
  explicit MaxUnpool(const KernelInfo& info)
      : kernel_(info.GetInts("kernel_shape")),
        strides_(info.GetIntsOr("strides", {})),
        pads_(info.GetIntsOr("pads", {})) {
    for (int64_t k : kernel_)
      if (k < 1) info.Fail("kernel_shape values must be >= 1");
    for (int64_t s : strides_)
      if (s < 1) info.Fail("strides must be >= 1");
    for (int64_t p : pads_)
      if (p < 0) info.Fail("pads must be >= 0");
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& ind = ctx.required_input(1);
    const Tensor* out_shape_t = ctx.input(2);
    const size_t r = kernel_.size();
    if (x.rank() != r + 2) ctx.Fail(StrCat("X must have rank ", r + 2, " for a ", r, "-D kernel_shape"));
    if (ind.dtype() != DataType::kInt64 || ind.shape() != x.shape()) ctx.Fail("I must be int64 with X's shape");
    if (!strides_.empty() && strides_.size() != r) ctx.Fail("strides must have one value per spatial dim");
    if (!pads_.empty() && pads_.size() != 2 * r) ctx.Fail("pads must have two values per spatial dim");
    Shape y_shape = {x.dim(0), x.dim(1)};
    for (size_t d = 0; d < r; ++d) {
      const int64_t s = strides_.empty() ? 1 : strides_[d];
      const int64_t pads = pads_.empty() ? 0 : pads_[d] + pads_[d + r];
      y_shape.push_back((x.dim(d + 2) - 1) * s + kernel_[d] - pads);
    }
    // Indices address the unpooled tensor of the inferred shape; a larger output_shape keeps
    // that tensor at its origin and pads the rest of every dim with zeros.
    const Shape inferred = y_shape;
    for (int64_t d : inferred)
      if (d < 0) ctx.Fail(StrCat("the unpooled shape [", StrJoin(inferred), "] is negative"));
    if (out_shape_t != nullptr) {
      if (out_shape_t->dtype() != DataType::kInt64 || out_shape_t->size() != static_cast<int64_t>(r + 2))
        ctx.Fail(StrCat("output_shape must be an int64 tensor of ", r + 2, " values"));
      const int64_t* os = out_shape_t->data<int64_t>();
      y_shape.assign(os, os + r + 2);
      for (size_t d = 0; d < y_shape.size(); ++d)
        if (y_shape[d] < inferred[d] || (d < 2 && y_shape[d] != inferred[d]))
          ctx.Fail(StrCat("output_shape [", StrJoin(y_shape), "] must keep N and C and be at least the unpooled shape [",
                          StrJoin(inferred), "]"));
    }
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), y_shape);
    const int64_t limit = ShapeSize(inferred);
    const bool same = y_shape == inferred;
    const int64_t* ip = ind.data<int64_t>();
    Dispatch(FloatTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      std::fill(yp, yp + y.size(), T{});
      for (int64_t i = 0; i < x.size(); ++i) {
        int64_t at = ip[i];
        if (at < 0 || at >= limit)
          ctx.Fail(StrCat("index ", at, " at position ", i, " is outside the unpooled tensor of ", limit, " elements"));
        if (!same) {
          // Re-address the index from the inferred layout into the output's.
          int64_t offset = 0, stride = 1;
          for (size_t d = inferred.size(); d-- > 0;) {
            offset += (at % inferred[d]) * stride;
            at /= inferred[d];
            stride *= y_shape[d];
          }
          at = offset;
        }
        yp[at] = xp[i];
      }
    });
  }

 private:
  std::vector<int64_t> kernel_, strides_, pads_;
};

ONYX_CPU_KERNEL("MaxUnpool", 9, 10, MaxUnpool);
ONYX_CPU_KERNEL("MaxUnpool", 11, 21, MaxUnpool);
ONYX_CPU_KERNEL("MaxUnpool", 22, kOpsetMax, MaxUnpool);

}  // namespace
}  // namespace onyx
