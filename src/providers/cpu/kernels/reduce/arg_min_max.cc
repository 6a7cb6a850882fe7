// ArgMax and ArgMin: int64 indices of the extreme along `axis` (opset 1; 11 negative axis;
// 12 select_last_index; 13 bfloat16). Ties take the first index, or the last with
// select_last_index. A NaN counts as the extreme (like numpy), the first one found wins.
#include <cmath>
#include <vector>

#include "base/type_traits.h"
#include "platform/thread_pool.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

template <bool kMax>
class ArgMinMax final : public OpKernel {
 public:
  explicit ArgMinMax(const KernelInfo& info)
      : axis_(info.GetIntOr("axis", 0)),
        keepdims_(info.GetIntOr("keepdims", 1) != 0),
        select_last_(info.opset() >= 12 && info.GetIntOr("select_last_index", 0) != 0) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const int64_t rank = static_cast<int64_t>(x.rank());
    const int64_t r = rank == 0 ? 1 : rank;  // a scalar behaves as a 1-element vector
    if (axis_ < -r || axis_ >= r) ctx.Fail(StrCat("axis ", axis_, " is out of range for rank ", rank));
    const int64_t axis = rank == 0 ? 0 : (axis_ < 0 ? axis_ + rank : axis_);
    Shape out_shape;
    int64_t outer = 1, inner = 1;
    const int64_t n = rank == 0 ? 1 : x.dim(axis);
    for (int64_t d = 0; d < rank; ++d) {
      if (d < axis) outer *= x.dim(d);
      if (d > axis) inner *= x.dim(d);
      if (d != axis)
        out_shape.push_back(x.dim(d));
      else if (keepdims_)
        out_shape.push_back(1);
    }
    Tensor& y = ctx.AllocateOutput(0, DataType::kInt64, out_shape);
    if (y.size() == 0) return;
    if (n == 0) ctx.Fail("cannot take the arg of an empty axis");
    Dispatch(NumericTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      const T* px = x.data<T>();
      int64_t* py = y.data<int64_t>();
      // Whether v replaces the current best b.
      auto better = [&](C v, C b) {
        if constexpr (std::is_floating_point_v<C>) {
          if (std::isnan(b)) return false;
          if (std::isnan(v)) return true;
        }
        if (select_last_) return kMax ? v >= b : v <= b;
        return kMax ? v > b : v < b;
      };
      ThreadPool::For(ctx.thread_pool(), outer, static_cast<double>(n * inner) * 2.0, [&](int64_t begin, int64_t end) {
        std::vector<C> best(static_cast<size_t>(inner));
        for (int64_t o = begin; o < end; ++o) {
          const T* base = px + o * n * inner;
          int64_t* out = py + o * inner;
          if (inner == 1) {
            C b = ToCompute(base[0]);
            int64_t bi = 0;
            for (int64_t i = 1; i < n; ++i) {
              const C v = ToCompute(base[i]);
              if (better(v, b)) b = v, bi = i;
            }
            out[0] = bi;
            continue;
          }
          // Walk rows of `inner` contiguous elements, keeping the best of each column.
          for (int64_t j = 0; j < inner; ++j) best[j] = ToCompute(base[j]), out[j] = 0;
          for (int64_t i = 1; i < n; ++i) {
            const T* row = base + i * inner;
            for (int64_t j = 0; j < inner; ++j) {
              const C v = ToCompute(row[j]);
              if (better(v, best[j])) best[j] = v, out[j] = i;
            }
          }
        }
      });
    });
  }

 private:
  int64_t axis_;
  bool keepdims_;
  bool select_last_;
};

ONYX_CPU_KERNEL("ArgMax", 1, 10, ArgMinMax<true>);
ONYX_CPU_KERNEL("ArgMax", 11, 11, ArgMinMax<true>);
ONYX_CPU_KERNEL("ArgMax", 12, kOpsetMax, ArgMinMax<true>);
ONYX_CPU_KERNEL("ArgMin", 1, 10, ArgMinMax<false>);
ONYX_CPU_KERNEL("ArgMin", 11, 11, ArgMinMax<false>);
ONYX_CPU_KERNEL("ArgMin", 12, kOpsetMax, ArgMinMax<false>);

}  // namespace
}  // namespace onyx
