// GlobalAveragePool, GlobalMaxPool and GlobalLpPool: one value per (n, c) plane over all
// spatial dims; the output keeps the rank with spatial dims of 1.
#include <cmath>
#include <limits>

#include "base/type_traits.h"
#include "linalg/vector_math.h"
#include "platform/thread_pool.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

enum class GlobalKind { kAverage, kMax, kLp };

template <GlobalKind kind>
class GlobalPool final : public OpKernel {
 public:
  explicit GlobalPool(const KernelInfo& info) {
    if (const ir::Attribute* a = info.FindAttr("p")) {
      // GlobalLpPool-1 has a float p; later opsets an int.
      p_ = a->type == ir::AttrType::kFloat ? static_cast<double>(a->f) : static_cast<double>(a->i);
      if (!(p_ > 0)) info.Fail(StrCat("p must be positive, got ", p_));
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    if (x.rank() < 2) ctx.Fail("X must have rank >= 2 (N, C, spatial...)");
    Shape y_shape = x.shape();
    for (size_t d = 2; d < y_shape.size(); ++d) y_shape[d] = 1;
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), y_shape);
    const int64_t planes = x.dim(0) * x.dim(1);
    if (planes == 0) return;
    const int64_t size = x.size() / planes;
    Dispatch(FloatTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      ThreadPool::For(ctx.thread_pool(), planes, static_cast<double>(size), [&](int64_t begin, int64_t end) {
        for (int64_t plane = begin; plane < end; ++plane) {
          const T* src = xp + plane * size;
          if constexpr (std::is_same_v<T, float>) {
            // The vector reductions: a serial sum waits on each add's latency.
            if (size > 0 && (kind != GlobalKind::kLp || p_ == 2.0)) {
              const size_t n = static_cast<size_t>(size);
              if constexpr (kind == GlobalKind::kAverage)
                yp[plane] = static_cast<float>(linalg::ReduceSum(src, n) / static_cast<double>(size));
              else if constexpr (kind == GlobalKind::kMax)
                yp[plane] = linalg::ReduceMax(src, n);
              else
                yp[plane] = static_cast<float>(std::sqrt(linalg::ReduceSumSquares(src, n)));
              continue;
            }
          }
          Acc acc = kind == GlobalKind::kMax ? -std::numeric_limits<Acc>::infinity() : Acc{0};
          for (int64_t i = 0; i < size; ++i) {
            const Acc v = static_cast<Acc>(ToCompute(src[i]));
            if constexpr (kind == GlobalKind::kMax) acc = v > acc ? v : acc;
            else if constexpr (kind == GlobalKind::kAverage) acc += v;
            else acc += p_ == 2.0 ? v * v : static_cast<Acc>(std::pow(std::abs(v), p_));
          }
          if constexpr (kind == GlobalKind::kAverage) {
            acc = size > 0 ? acc / static_cast<Acc>(size) : std::numeric_limits<Acc>::quiet_NaN();
          } else if constexpr (kind == GlobalKind::kLp) {
            acc = p_ == 2.0 ? std::sqrt(acc) : static_cast<Acc>(std::pow(acc, 1.0 / p_));
          }
          yp[plane] = FromCompute<T>(static_cast<ComputeType<T>>(acc));
        }
      });
    });
  }

 private:
  double p_ = 2.0;
};

ONYX_CPU_KERNEL("GlobalAveragePool", 1, 21, GlobalPool<GlobalKind::kAverage>);
ONYX_CPU_KERNEL("GlobalAveragePool", 22, kOpsetMax, GlobalPool<GlobalKind::kAverage>);
ONYX_CPU_KERNEL("GlobalMaxPool", 1, 21, GlobalPool<GlobalKind::kMax>);
ONYX_CPU_KERNEL("GlobalMaxPool", 22, kOpsetMax, GlobalPool<GlobalKind::kMax>);
ONYX_CPU_KERNEL("GlobalLpPool", 1, 1, GlobalPool<GlobalKind::kLp>);  // float p
ONYX_CPU_KERNEL("GlobalLpPool", 2, 21, GlobalPool<GlobalKind::kLp>);
ONYX_CPU_KERNEL("GlobalLpPool", 22, kOpsetMax, GlobalPool<GlobalKind::kLp>);

}  // namespace
}  // namespace onyx
