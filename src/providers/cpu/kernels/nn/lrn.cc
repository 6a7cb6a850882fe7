// LRN (opsets 1, 13): local response normalization across channels,
//   y = x / (bias + alpha / size * sum of x^2 over channels [c - (size-1)/2, c + ceil((size-1)/2)])^beta.
#include <cmath>
#include <vector>

#include "base/type_traits.h"
#include "platform/thread_pool.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

class Lrn final : public OpKernel {
 public:
  explicit Lrn(const KernelInfo& info)
      : size_(info.GetInt("size")),
        alpha_(info.GetFloatOr("alpha", 1e-4f)),
        beta_(info.GetFloatOr("beta", 0.75f)),
        bias_(info.GetFloatOr("bias", 1.0f)) {
    if (size_ < 1) info.Fail(StrCat("size must be >= 1, got ", size_));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    if (x.rank() < 2) ctx.Fail("input must have rank >= 2 (N, C, ...)");
    const int64_t batch = x.dim(0), channels = x.dim(1);
    const int64_t inner = batch * channels == 0 ? 0 : x.size() / (batch * channels);
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.shape());
    if (y.size() == 0) return;
    const int64_t before = (size_ - 1) / 2, after = size_ - 1 - before;
    const double scale = static_cast<double>(alpha_) / static_cast<double>(size_);
    Dispatch(FloatTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      ThreadPool::For(ctx.thread_pool(), batch * channels, 4.0 * static_cast<double>(inner * size_),
                      [&](int64_t begin, int64_t end) {
                        std::vector<Acc> sum(static_cast<size_t>(inner));
                        for (int64_t j = begin; j < end; ++j) {
                          const int64_t n = j / channels, c = j % channels;
                          std::fill(sum.begin(), sum.end(), Acc{0});
                          const int64_t c0 = std::max<int64_t>(0, c - before);
                          const int64_t c1 = std::min<int64_t>(channels - 1, c + after);
                          for (int64_t k = c0; k <= c1; ++k) {
                            const T* src = xp + (n * channels + k) * inner;
                            for (int64_t i = 0; i < inner; ++i) {
                              const Acc v = static_cast<Acc>(ToCompute(src[i]));
                              sum[i] += v * v;
                            }
                          }
                          const T* src = xp + j * inner;
                          T* dst = yp + j * inner;
                          for (int64_t i = 0; i < inner; ++i) {
                            const Acc denom = static_cast<Acc>(
                                std::pow(static_cast<double>(bias_) + scale * static_cast<double>(sum[i]), beta_));
                            dst[i] = FromCompute<T>(static_cast<Acc>(ToCompute(src[i])) / denom);
                          }
                        }
                      });
    });
  }

 private:
  int64_t size_;
  float alpha_, beta_, bias_;
};

ONYX_CPU_KERNEL("LRN", 1, 12, Lrn);
ONYX_CPU_KERNEL("LRN", 13, kOpsetMax, Lrn);

}  // namespace
}  // namespace onyx
