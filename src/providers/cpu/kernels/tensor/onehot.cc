// OneHot: output[..., d, ...] = on where index == d, else off. Indices outside the range give
// a row of `off` (as the spec says); from opset 11 negative indices count from the back.
#include <cmath>

#include "platform/thread_pool.h"
#include "providers/cpu/kernels/tensor/tensor_util.h"

namespace onyx {
namespace tensor_kernels {
namespace {

// A numeric tensor's element i as int64 (floats truncate toward zero).
template <typename T>
int64_t AsInt64(T v) {
  if constexpr (std::is_floating_point_v<ComputeType<T>>) {
    const auto f = static_cast<double>(ToCompute(v));
    if (!(std::fabs(f) < 9.2e18)) return INT64_MIN;  // NaN or out of range: matches nothing
    return static_cast<int64_t>(f);
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    return v > static_cast<uint64_t>(INT64_MAX) ? INT64_MIN : static_cast<int64_t>(v);
  } else {
    return static_cast<int64_t>(v);
  }
}

std::vector<int64_t> ReadAsInt64(const KernelContext& ctx, const Tensor& t) {
  std::vector<int64_t> out(static_cast<size_t>(t.size()));
  Dispatch(NumericTypes{}, t.dtype(), ctx.node(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t i = 0; i < t.size(); ++i) out[static_cast<size_t>(i)] = AsInt64(t.data<T>()[i]);
  });
  return out;
}

class OneHot final : public OpKernel {
 public:
  explicit OneHot(const KernelInfo& info) : axis_(info.GetIntOr("axis", -1)), negative_indices_(info.opset() >= 11) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& indices = ctx.required_input(0);
    const Tensor& depth_t = ctx.required_input(1);
    const Tensor& values = ctx.required_input(2);
    if (depth_t.size() != 1) ctx.Fail("depth must hold exactly one value");
    if (values.size() != 2) ctx.Fail("values must hold exactly two elements [off, on]");
    const int64_t depth = ReadAsInt64(ctx, depth_t)[0];
    if (depth < 0) ctx.Fail(StrCat("depth ", depth, " is negative"));
    const auto r = static_cast<int64_t>(indices.rank());
    if (axis_ < -r - 1 || axis_ > r) ctx.Fail(StrCat("axis ", axis_, " is out of range for output rank ", r + 1));
    const auto axis = static_cast<size_t>(axis_ < 0 ? axis_ + r + 1 : axis_);
    Shape out_shape = indices.shape();
    out_shape.insert(out_shape.begin() + static_cast<std::ptrdiff_t>(axis), depth);
    std::vector<int64_t> idx = ReadAsInt64(ctx, indices);
    for (int64_t& v : idx) {
      if (negative_indices_ && v < 0 && v >= -depth) v += depth;
      if (v < 0 || v >= depth) v = -1;
    }
    Tensor& y = ctx.AllocateOutput(0, values.dtype(), out_shape);
    if (y.size() == 0) return;
    const int64_t outer = Product(indices.shape(), 0, axis);
    const int64_t inner = Product(indices.shape(), axis, indices.rank());
    DispatchBySize(ctx, values.dtype(), [&](auto tag) {
      using U = typename decltype(tag)::type;
      const U off = values.data<U>()[0];
      const U on = values.data<U>()[1];
      U* out = y.data<U>();
      ThreadPool::For(ctx.thread_pool(), outer, static_cast<double>(depth * inner), [&](int64_t begin, int64_t end) {
        for (int64_t o = begin; o < end; ++o) {
          U* block = out + o * depth * inner;
          FillN(block, off, depth * inner);
          for (int64_t i = 0; i < inner; ++i) {
            const int64_t v = idx[static_cast<size_t>(o * inner + i)];
            if (v >= 0) block[v * inner + i] = on;
          }
        }
      });
    });
  }

 private:
  int64_t axis_;
  bool negative_indices_;
};

ONYX_CPU_KERNEL("OneHot", 9, 10, OneHot);
ONYX_CPU_KERNEL("OneHot", 11, kOpsetMax, OneHot);  // negative indices count from the back

}  // namespace
}  // namespace tensor_kernels
}  // namespace onyx
