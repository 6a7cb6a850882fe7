// Trilu: keeps the upper (j - i >= k) or lower (j - i <= k) triangle of each matrix in the
// last two dims and zeroes the rest. Whole row segments are copied or cleared at once.
#include <algorithm>

#include "platform/thread_pool.h"
#include "providers/cpu/kernels/tensor/tensor_util.h"

namespace onyx {
namespace tensor_kernels {
namespace {

class Trilu final : public OpKernel {
 public:
  explicit Trilu(const KernelInfo& info) : upper_(info.GetIntOr("upper", 1) != 0) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    if (x.rank() < 2) ctx.Fail("input must have rank 2 or more");
    const int64_t k = ctx.input(1) != nullptr ? ReadScalarInt(ctx, *ctx.input(1), "k") : 0;
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.shape());
    if (y.size() == 0) return;
    const int64_t n = x.dim(x.rank() - 2), m = x.dim(x.rank() - 1);
    const int64_t rows = x.size() / m;
    DispatchBySize(ctx, x.dtype(), [&](auto tag) {
      using U = typename decltype(tag)::type;
      const U* in = x.data<U>();
      U* out = y.data<U>();
      const U zero{};
      ThreadPool::For(ctx.thread_pool(), rows, 4.0 + static_cast<double>(m) / 4.0, [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
          const int64_t i = row % n;
          const U* src = in + row * m;
          U* dst = out + row * m;
          // Columns [lo, hi) are kept; the clamps keep huge k from overflowing.
          const int64_t bound = std::clamp<int64_t>(k, -m - n, m + n) + i;
          const int64_t lo = upper_ ? std::clamp<int64_t>(bound, 0, m) : 0;
          const int64_t hi = upper_ ? m : std::clamp<int64_t>(bound + 1, 0, m);
          FillN(dst, zero, lo);
          CopyN(dst + lo, src + lo, hi - lo);
          FillN(dst + std::max(lo, hi), zero, m - std::max(lo, hi));
        }
      });
    });
  }

 private:
  bool upper_;
};

ONYX_CPU_KERNEL("Trilu", 14, kOpsetMax, Trilu);

}  // namespace
}  // namespace tensor_kernels
}  // namespace onyx
