// LpNormalization (opsets 1, 22): x / ||x||_p along one axis, p in {1, 2}. A zero vector
// stays zero instead of becoming NaN.
#include <cmath>
#include <vector>

#include "base/type_traits.h"
#include "ops/broadcast.h"
#include "platform/thread_pool.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

class LpNormalization final : public OpKernel {
 public:
  explicit LpNormalization(const KernelInfo& info) : axis_(info.GetIntOr("axis", -1)), p_(info.GetIntOr("p", 2)) {
    if (p_ != 1 && p_ != 2) info.Fail(StrCat("p must be 1 or 2, got ", p_));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const int64_t rank = static_cast<int64_t>(x.rank());
    if (rank == 0) ctx.Fail("input must have rank >= 1");
    const int64_t axis = NormalizeAxis(axis_, rank);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
    for (int64_t d = axis + 1; d < rank; ++d) inner *= x.dim(d);
    const int64_t n = x.dim(axis);
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.shape());
    if (y.size() == 0) return;
    Dispatch(FloatTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      ThreadPool::For(ctx.thread_pool(), outer * inner, 4.0 * static_cast<double>(n), [&](int64_t begin, int64_t end) {
        for (int64_t j = begin; j < end; ++j) {
          const int64_t base = (j / inner) * n * inner + j % inner;
          Acc norm = 0;
          for (int64_t i = 0; i < n; ++i) {
            const Acc v = static_cast<Acc>(ToCompute(xp[base + i * inner]));
            norm += p_ == 1 ? std::abs(v) : v * v;
          }
          if (p_ == 2) norm = std::sqrt(norm);
          const Acc inv = norm != 0 ? Acc{1} / norm : Acc{0};
          for (int64_t i = 0; i < n; ++i)
            yp[base + i * inner] = FromCompute<T>(static_cast<Acc>(ToCompute(xp[base + i * inner])) * inv);
        }
      });
    });
  }

 private:
  int64_t axis_;
  int64_t p_;
};

ONYX_CPU_KERNEL("LpNormalization", 1, 21, LpNormalization);
ONYX_CPU_KERNEL("LpNormalization", 22, kOpsetMax, LpNormalization);

}  // namespace
}  // namespace onyx
