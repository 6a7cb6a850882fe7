// Det (opsets 11, 22): determinants of the trailing [M, M] matrices of a [*, M, M] input, by LU
// decomposition with partial pivoting in double. A singular matrix gives 0, an empty one 1.
#include <cmath>
#include <utility>
#include <vector>

#include "base/type_traits.h"
#include "platform/thread_pool.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

double Determinant(std::vector<double>& a, int64_t m) {
  double det = 1.0;
  for (int64_t c = 0; c < m; ++c) {
    int64_t pivot = c;
    for (int64_t r = c + 1; r < m; ++r)
      if (std::fabs(a[r * m + c]) > std::fabs(a[pivot * m + c])) pivot = r;
    if (a[pivot * m + c] == 0.0) return 0.0;
    if (pivot != c) {
      for (int64_t j = 0; j < m; ++j) std::swap(a[c * m + j], a[pivot * m + j]);
      det = -det;
    }
    const double p = a[c * m + c];
    det *= p;
    for (int64_t r = c + 1; r < m; ++r) {
      const double f = a[r * m + c] / p;
      if (f == 0.0) continue;
      for (int64_t j = c + 1; j < m; ++j) a[r * m + j] -= f * a[c * m + j];
    }
  }
  return det;
}

class Det final : public OpKernel {
 public:
  explicit Det(const KernelInfo&) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    if (x.rank() < 2) ctx.Fail("input must have rank >= 2");
    const int64_t m = x.dim(x.rank() - 1);
    if (x.dim(x.rank() - 2) != m) ctx.Fail("the trailing two dims must form square matrices");
    const Shape out_shape(x.shape().begin(), x.shape().end() - 2);
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), out_shape);
    const int64_t batches = y.size();
    Dispatch(FloatTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      T* py = y.data<T>();
      ThreadPool::For(ctx.thread_pool(), batches, static_cast<double>(m * m * m), [&](int64_t begin, int64_t end) {
        std::vector<double> a(static_cast<size_t>(m * m));
        for (int64_t b = begin; b < end; ++b) {
          for (int64_t i = 0; i < m * m; ++i) a[i] = static_cast<double>(ToCompute(px[b * m * m + i]));
          py[b] = FromCompute<T>(static_cast<ComputeType<T>>(Determinant(a, m)));
        }
      });
    });
  }
};

ONYX_CPU_KERNEL("Det", 11, 21, Det);
ONYX_CPU_KERNEL("Det", 22, kOpsetMax, Det);

}  // namespace
}  // namespace onyx
