// MeanVarianceNormalization (opsets 9, 13): (x - mean) / (sqrt(variance) + 1e-9) with mean and
// population variance taken over `axes` (default [0, 2, 3]), as ONNX's function body does.
#include <cmath>
#include <vector>

#include "base/type_traits.h"
#include "ops/broadcast.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

constexpr double kMvnEpsilon = 1e-9;

class MeanVarianceNormalization final : public OpKernel {
 public:
  explicit MeanVarianceNormalization(const KernelInfo& info) : axes_(info.GetIntsOr("axes", {0, 2, 3})) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const int64_t rank = static_cast<int64_t>(x.rank());
    std::vector<bool> reduced(static_cast<size_t>(rank), false);
    for (int64_t a : axes_) {
      const int64_t axis = NormalizeAxis(a, rank);
      if (reduced[axis]) ctx.Fail(StrCat("axis ", a, " appears twice in axes"));
      reduced[axis] = true;
    }
    // Each element's slot: its coordinates along the kept axes, row-major.
    std::vector<int64_t> slot_stride(static_cast<size_t>(rank), 0);
    int64_t slots = 1;
    for (int64_t d = rank; d-- > 0;) {
      if (reduced[d]) continue;
      slot_stride[d] = slots;
      slots *= x.dim(d);
    }
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.shape());
    if (y.size() == 0) return;
    const int64_t count = x.size() / slots;
    std::vector<int64_t> slot_of(static_cast<size_t>(x.size()));
    {
      std::vector<int64_t> pos(static_cast<size_t>(rank), 0);
      int64_t s = 0;
      for (int64_t i = 0; i < x.size(); ++i) {
        slot_of[i] = s;
        for (int64_t d = rank; d-- > 0;) {
          s += slot_stride[d];
          if (++pos[d] < x.dim(d)) break;
          s -= slot_stride[d] * x.dim(d);
          pos[d] = 0;
        }
      }
    }
    Dispatch(FloatTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      std::vector<double> mean(static_cast<size_t>(slots), 0.0), sq(static_cast<size_t>(slots), 0.0);
      for (int64_t i = 0; i < x.size(); ++i) mean[slot_of[i]] += static_cast<double>(ToCompute(xp[i]));
      for (double& m : mean) m /= static_cast<double>(count);
      for (int64_t i = 0; i < x.size(); ++i) {
        const double d = static_cast<double>(ToCompute(xp[i])) - mean[slot_of[i]];
        sq[slot_of[i]] += d * d;
      }
      for (double& v : sq) v = 1.0 / (std::sqrt(v / static_cast<double>(count)) + kMvnEpsilon);
      for (int64_t i = 0; i < x.size(); ++i) {
        const int64_t s = slot_of[i];
        yp[i] = FromCompute<T>(static_cast<ComputeType<T>>((static_cast<double>(ToCompute(xp[i])) - mean[s]) * sq[s]));
      }
    });
  }

 private:
  std::vector<int64_t> axes_;
};

ONYX_CPU_KERNEL("MeanVarianceNormalization", 9, 12, MeanVarianceNormalization);
ONYX_CPU_KERNEL("MeanVarianceNormalization", 13, kOpsetMax, MeanVarianceNormalization);

}  // namespace
}  // namespace onyx
