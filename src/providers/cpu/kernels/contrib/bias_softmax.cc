// com.microsoft.BiasSoftmax: Y = softmax(data + bias) over the dimensions from `axis` on
// (default 1). bias holds the softmax dims plus some of data's leading dims:
//   is_inner_broadcast = 1: bias (d0..d(k-1), 1.., softmax dims); consecutive data rows share a
//     bias row (the broadcast dims are the inner ones before axis);
//   is_inner_broadcast = 0: bias (1.., dk..d(axis-1), softmax dims); bias rows repeat.
// Rows are added, maxed, exponentiated and normalized in one pass over cache-resident data.
// float16 computes in float; double in double.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "base/type_traits.h"
#include "ops/broadcast.h"
#include "platform/thread_pool.h"
#include "providers/kernel.h"
#include "providers/cpu/kernels/contrib/vector_math.h"

namespace onyx::contrib {
namespace {

class BiasSoftmax final : public OpKernel {
 public:
  explicit BiasSoftmax(const KernelInfo& info)
      : axis_(info.GetIntOr("axis", 1)), inner_broadcast_(info.GetInt("is_inner_broadcast") != 0) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& bias = ctx.required_input(1);
    if (bias.dtype() != x.dtype()) ctx.Fail("bias must have data's element type");
    if (x.rank() == 0) ctx.Fail("data must have rank >= 1");
    const int64_t axis = NormalizeAxis(axis_, static_cast<int64_t>(x.rank()));
    const Shape& xs = x.shape();
    int64_t n = 1;
    for (size_t d = static_cast<size_t>(axis); d < xs.size(); ++d) n *= xs[d];
    const int64_t rows = n == 0 ? 0 : x.size() / n;
    // bias must end with the softmax dims; its leading elements count the bias rows.
    const Shape& bs = bias.shape();
    const size_t tail = xs.size() - static_cast<size_t>(axis);
    bool ok = bs.size() >= tail;
    for (size_t i = 0; ok && i < tail; ++i) ok = bs[bs.size() - tail + i] == xs[axis + i];
    const int64_t bias_rows = n == 0 ? 0 : bias.size() / n;
    if (!ok || (rows > 0 && (bias_rows == 0 || rows % bias_rows != 0)))
      ctx.Fail(StrCat("bias shape ", ShapeToString(bs), " does not broadcast to data ", ShapeToString(xs),
                      " with softmax over axes ", axis, ".."));
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), xs);
    if (rows == 0 || n == 0) return;
    const int64_t group = rows / bias_rows;  // data rows per bias row (inner) or bias period (outer)
    Dispatch(TypeList<float, double, Float16, BFloat16>{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      const T* xd = x.data<T>();
      const T* bd = bias.data<T>();
      T* yd = y.data<T>();
      ThreadPool::For(ctx.thread_pool(), rows, 24.0 * n, [&](int64_t begin, int64_t end) {
        std::vector<C> row(static_cast<size_t>(n));
        for (int64_t r = begin; r < end; ++r) {
          const int64_t br = inner_broadcast_ ? r / group : r % bias_rows;
          const T* xr = xd + r * n;
          const T* b = bd + br * n;
          C mx = -std::numeric_limits<C>::infinity();
          for (int64_t i = 0; i < n; ++i) {
            row[i] = ToCompute(xr[i]) + ToCompute(b[i]);
            mx = std::max(mx, row[i]);
          }
          for (int64_t i = 0; i < n; ++i) {
            if constexpr (std::is_same_v<C, float>) row[i] = vmath::Exp(row[i] - mx);
            else row[i] = std::exp(row[i] - mx);
          }
          C sum = 0;
          for (int64_t i = 0; i < n; ++i) sum += row[i];
          const C inv = C(1) / sum;
          T* yr = yd + r * n;
          for (int64_t i = 0; i < n; ++i) yr[i] = FromCompute<T>(row[i] * inv);
        }
      });
    });
  }

 private:
  int64_t axis_;
  bool inner_broadcast_;
};

ONYX_REGISTER_KERNEL("CPU", "com.microsoft", "BiasSoftmax", 1, kOpsetMax, BiasSoftmax);

}  // namespace
}  // namespace onyx::contrib
