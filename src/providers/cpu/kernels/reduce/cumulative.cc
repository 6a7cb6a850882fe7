// CumSum (opset 11; 14 adds float16/bfloat16) and CumProd (opset 26): running sum / product
// along the axis given as a 0-D or 1-element int32/int64 input, with `exclusive` (each output
// leaves out its own element) and `reverse` (run from the end). Floating types accumulate in
// double; integers wrap like the element type.
#include <type_traits>
#include <vector>

#include "base/type_traits.h"
#include "platform/thread_pool.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

template <typename T>
using CumAcc = std::conditional_t<std::is_integral_v<T>, uint64_t, double>;

template <bool kProd>
class Cumulative final : public OpKernel {
 public:
  explicit Cumulative(const KernelInfo& info)
      : exclusive_(info.GetIntOr("exclusive", 0) != 0), reverse_(info.GetIntOr("reverse", 0) != 0) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& axis_t = ctx.required_input(1);
    if (axis_t.size() != 1 || axis_t.rank() > 1) ctx.Fail("axis must be a scalar or a 1-element 1-D tensor");
    int64_t axis = 0;
    if (axis_t.dtype() == DataType::kInt64)
      axis = axis_t.data<int64_t>()[0];
    else if (axis_t.dtype() == DataType::kInt32)
      axis = axis_t.data<int32_t>()[0];
    else
      ctx.Fail(StrCat("axis must be int32 or int64, got ", DataTypeName(axis_t.dtype())));
    const int64_t rank = static_cast<int64_t>(x.rank());
    if (rank == 0) ctx.Fail("input must have rank >= 1");
    if (axis < -rank || axis >= rank) ctx.Fail(StrCat("axis ", axis, " is out of range for rank ", rank));
    if (axis < 0) axis += rank;
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
    for (int64_t d = axis + 1; d < rank; ++d) inner *= x.dim(d);
    const int64_t n = x.dim(axis);
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.shape());
    if (y.size() == 0) return;
    using Types = TypeList<float, double, Float16, BFloat16, int32_t, int64_t, uint32_t, uint64_t, int8_t, int16_t,
                           uint8_t, uint16_t>;
    Dispatch(Types{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using A = CumAcc<T>;
      const T* px = x.data<T>();
      T* py = y.data<T>();
      auto load = [](T v) -> A {
        if constexpr (std::is_integral_v<T>)
          return static_cast<A>(v);
        else
          return static_cast<double>(ToCompute(v));
      };
      auto store = [](A v) -> T {
        if constexpr (std::is_integral_v<T>)
          return static_cast<T>(v);
        else
          return FromCompute<T>(static_cast<ComputeType<T>>(v));
      };
      ThreadPool::For(ctx.thread_pool(), outer, static_cast<double>(n * inner) * 2.0, [&](int64_t begin, int64_t end) {
        std::vector<A> acc(static_cast<size_t>(inner));
        for (int64_t o = begin; o < end; ++o) {
          const T* src = px + o * n * inner;
          T* dst = py + o * n * inner;
          std::fill(acc.begin(), acc.end(), A(kProd ? 1 : 0));
          for (int64_t s = 0; s < n; ++s) {
            const int64_t i = reverse_ ? n - 1 - s : s;
            const T* row = src + i * inner;
            T* out = dst + i * inner;
            for (int64_t j = 0; j < inner; ++j) {
              const A v = load(row[j]);
              if (exclusive_) out[j] = store(acc[j]);
              acc[j] = kProd ? static_cast<A>(acc[j] * v) : static_cast<A>(acc[j] + v);
              if (!exclusive_) out[j] = store(acc[j]);
            }
          }
        }
      });
    });
  }

 private:
  bool exclusive_;
  bool reverse_;
};

ONYX_CPU_KERNEL("CumSum", 11, 13, Cumulative<false>);
ONYX_CPU_KERNEL("CumSum", 14, kOpsetMax, Cumulative<false>);
ONYX_CPU_KERNEL("CumProd", 26, kOpsetMax, Cumulative<true>);

}  // namespace
}  // namespace onyx
