// Reshape, Flatten, Squeeze, Unsqueeze: the output is the input's bytes under another shape, so
// every kernel here returns a view and copies nothing.
#include <algorithm>

#include "providers/cpu/kernels/tensor/tensor_util.h"

namespace onyx {
namespace tensor_kernels {
namespace {

// Reshape-1..4 take the shape as an attribute; 5+ as an input. 14+ adds allowzero: a 0 is a
// literal zero instead of "copy the input's dim".
class Reshape final : public OpKernel {
 public:
  explicit Reshape(const KernelInfo& info) {
    if (info.opset() < 5) {
      shape_attr_ = info.GetInts("shape");
    } else if (info.opset() >= 14) {
      allowzero_ = info.GetIntOr("allowzero", 0) != 0;
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const std::vector<int64_t> requested =
        ctx.node().opset < 5 ? shape_attr_ : ReadInts(ctx, ctx.required_input(1), "shape");
    Shape out(requested.size());
    int64_t infer_at = -1;
    int64_t known = 1;
    bool has_zero = false;
    for (size_t i = 0; i < requested.size(); ++i) {
      int64_t d = requested[i];
      if (d == -1) {
        if (infer_at >= 0) ctx.Fail(StrCat("shape [", StrJoin(requested), "] has more than one -1"));
        infer_at = static_cast<int64_t>(i);
        continue;
      }
      if (d < -1) ctx.Fail(StrCat("shape [", StrJoin(requested), "] has a negative dim ", d));
      if (d == 0 && !allowzero_) {
        if (i >= x.rank())
          ctx.Fail(StrCat("shape [", StrJoin(requested), "] copies dim ", i, " but the input has rank ", x.rank()));
        d = x.dim(i);
      }
      if (d == 0) has_zero = true;
      out[i] = d;
      if (d != 0 && known > INT64_MAX / d) ctx.Fail(StrCat("shape [", StrJoin(requested), "] is too large"));
      known *= d;
    }
    if (infer_at >= 0) {
      if (allowzero_ && has_zero) ctx.Fail(StrCat("shape [", StrJoin(requested), "] mixes -1 with 0 under allowzero"));
      if (known == 0 || x.size() % known != 0)
        ctx.Fail(StrCat("cannot infer the -1 of shape [", StrJoin(requested), "] from ", x.size(), " elements"));
      out[static_cast<size_t>(infer_at)] = x.size() / known;
    } else if (known != x.size()) {
      ctx.Fail(StrCat("shape [", StrJoin(requested), "] holds ", known, " elements, the input ", x.size()));
    }
    ctx.SetOutput(0, Value(x.Reshaped(out)));
  }

 private:
  std::vector<int64_t> shape_attr_;
  bool allowzero_ = false;
};

// Flatten to 2-D at `axis`: [prod(d[:axis]), prod(d[axis:])]. Negative axes from opset 11.
class Flatten final : public OpKernel {
 public:
  explicit Flatten(const KernelInfo& info) : axis_(info.GetIntOr("axis", 1)) {
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const auto r = static_cast<int64_t>(x.rank());
    if (axis_ < -r || axis_ > r) ctx.Fail(StrCat("axis ", axis_, " is out of range [", -r, ", ", r, "]"));
    const auto axis = static_cast<size_t>(axis_ < 0 ? axis_ + r : axis_);
    ctx.SetOutput(0, Value(x.Reshaped({Product(x.shape(), 0, axis), Product(x.shape(), axis, x.rank())})));
  }

 private:
  int64_t axis_;
};

// Squeeze/Unsqueeze: axes is an attribute before opset 13 and an input from 13 on. Negative
// axes from opset 11.
std::vector<int64_t> AxesOf(const KernelContext& ctx, const std::vector<int64_t>& attr_axes, bool has_attr,
                            bool* given) {
  if (ctx.node().opset < 13) {
    *given = has_attr;
    return attr_axes;
  }
  const Tensor* t = ctx.input(1);
  *given = t != nullptr;
  return t ? ReadInts(ctx, *t, "axes") : std::vector<int64_t>{};
}

class Squeeze final : public OpKernel {
 public:
  explicit Squeeze(const KernelInfo& info) : has_attr_(info.HasAttr("axes")) {
    if (info.opset() < 13 && has_attr_) axes_ = info.GetInts("axes");
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    bool given = false;
    const std::vector<int64_t> raw = AxesOf(ctx, axes_, has_attr_, &given);
    const auto r = static_cast<int64_t>(x.rank());
    std::vector<char> drop(x.rank(), 0);
    if (given) {
      for (int64_t a : NormalizeAxes(ctx, raw, r, "axis")) {
        if (x.dim(static_cast<size_t>(a)) != 1)
          ctx.Fail(StrCat("cannot squeeze axis ", a, " of size ", x.dim(static_cast<size_t>(a))));
        drop[static_cast<size_t>(a)] = 1;
      }
    } else {
      for (size_t d = 0; d < x.rank(); ++d) drop[d] = x.dim(d) == 1;
    }
    Shape out;
    for (size_t d = 0; d < x.rank(); ++d)
      if (!drop[d]) out.push_back(x.dim(d));
    ctx.SetOutput(0, Value(x.Reshaped(out)));
  }

 private:
  bool has_attr_;
  std::vector<int64_t> axes_;
};

class Unsqueeze final : public OpKernel {
 public:
  explicit Unsqueeze(const KernelInfo& info) {
    if (info.opset() < 13) {
      axes_ = info.GetInts("axes");
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    bool given = false;
    const std::vector<int64_t> raw = AxesOf(ctx, axes_, true, &given);
    if (!given) ctx.Fail("axes input is required");
    const auto out_rank = static_cast<int64_t>(x.rank() + raw.size());
    std::vector<char> inserted(static_cast<size_t>(out_rank), 0);
    for (int64_t a : NormalizeAxes(ctx, raw, out_rank, "axis")) inserted[static_cast<size_t>(a)] = 1;
    Shape out;
    size_t next = 0;
    for (size_t d = 0; d < inserted.size(); ++d) out.push_back(inserted[d] ? 1 : x.dim(next++));
    ctx.SetOutput(0, Value(x.Reshaped(out)));
  }

 private:
  std::vector<int64_t> axes_;
};

ONYX_CPU_KERNEL("Reshape", 1, 4, Reshape);    // shape attribute
ONYX_CPU_KERNEL("Reshape", 5, 13, Reshape);   // shape input
ONYX_CPU_KERNEL("Reshape", 14, kOpsetMax, Reshape);  // + allowzero
ONYX_CPU_KERNEL("Flatten", 1, 10, Flatten);
ONYX_CPU_KERNEL("Flatten", 11, kOpsetMax, Flatten);  // negative axis
ONYX_CPU_KERNEL("Squeeze", 1, 10, Squeeze);
ONYX_CPU_KERNEL("Squeeze", 11, 12, Squeeze);          // negative axes
ONYX_CPU_KERNEL("Squeeze", 13, kOpsetMax, Squeeze);   // axes input
ONYX_CPU_KERNEL("Unsqueeze", 1, 10, Unsqueeze);
ONYX_CPU_KERNEL("Unsqueeze", 11, 12, Unsqueeze);
ONYX_CPU_KERNEL("Unsqueeze", 13, kOpsetMax, Unsqueeze);

}  // namespace
}  // namespace tensor_kernels
}  // namespace onyx
