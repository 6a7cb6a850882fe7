// MaxRoiPool (opsets 1, 22): for each region [batch, x1, y1, x2, y2] (scaled by spatial_scale
// and rounded) the max of X over each cell of a pooled_shape grid; empty cells give 0.
#include <algorithm>
#include <cmath>
#include <limits>

#include "base/type_traits.h"
#include "platform/thread_pool.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

constexpr double kMaxCoordinate = 1e15;  // keeps rounded coordinates exact in int64

class MaxRoiPool final : public OpKernel {
 public:
  explicit MaxRoiPool(const KernelInfo& info)
      : pooled_(info.GetInts("pooled_shape")), spatial_scale_(info.GetFloatOr("spatial_scale", 1.0f)) {
    if (pooled_.size() != 2 || pooled_[0] < 1 || pooled_[1] < 1)
      info.Fail(StrCat("pooled_shape must be two values >= 1, got [", StrJoin(pooled_), "]"));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& rois = ctx.required_input(1);
    if (x.rank() != 4) ctx.Fail("X must have rank 4 (N, C, H, W)");
    if (rois.rank() != 2 || rois.dim(1) != 5) ctx.Fail("rois must have shape [num_rois, 5]");
    if (rois.dtype() != x.dtype()) ctx.Fail("rois must have X's element type");
    const int64_t batch = x.dim(0), channels = x.dim(1), height = x.dim(2), width = x.dim(3);
    const int64_t num_rois = rois.dim(0), ph = pooled_[0], pw = pooled_[1];
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), {num_rois, channels, ph, pw});
    if (y.size() == 0) return;
    Dispatch(FloatTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      const T* xp = x.data<T>();
      const T* rp = rois.data<T>();
      T* yp = y.data<T>();
      for (int64_t n = 0; n < num_rois; ++n) {
        const double b = static_cast<double>(ToCompute(rp[n * 5]));
        if (!(b >= 0 && b < static_cast<double>(batch)))
          ctx.Fail(StrCat("roi ", n, " names batch index ", b, ", outside [0, ", batch, ")"));
        for (int i = 1; i < 5; ++i) {
          const double v = static_cast<double>(ToCompute(rp[n * 5 + i])) * spatial_scale_;
          if (!(std::abs(v) < kMaxCoordinate)) ctx.Fail(StrCat("roi ", n, " has a non-finite or huge coordinate"));
        }
      }
      ThreadPool::For(ctx.thread_pool(), num_rois * channels, static_cast<double>(height * width),
                      [&](int64_t begin, int64_t end) {
                        for (int64_t j = begin; j < end; ++j) {
                          const int64_t n = j / channels, c = j % channels;
                          const T* roi = rp + n * 5;
                          auto coord = [&](int i) {
                            return static_cast<int64_t>(std::round(static_cast<double>(ToCompute(roi[i])) * spatial_scale_));
                          };
                          const int64_t b = static_cast<int64_t>(ToCompute(roi[0]));
                          const int64_t x1 = coord(1), y1 = coord(2), x2 = coord(3), y2 = coord(4);
                          const double bin_h = static_cast<double>(std::max<int64_t>(y2 - y1 + 1, 1)) / static_cast<double>(ph);
                          const double bin_w = static_cast<double>(std::max<int64_t>(x2 - x1 + 1, 1)) / static_cast<double>(pw);
                          const T* plane = xp + (b * channels + c) * height * width;
                          T* out = yp + j * ph * pw;
                          for (int64_t i = 0; i < ph; ++i) {
                            const int64_t h0 = std::clamp<int64_t>(static_cast<int64_t>(std::floor(i * bin_h)) + y1, 0, height);
                            const int64_t h1 = std::clamp<int64_t>(static_cast<int64_t>(std::ceil((i + 1) * bin_h)) + y1, 0, height);
                            for (int64_t k = 0; k < pw; ++k) {
                              const int64_t w0 = std::clamp<int64_t>(static_cast<int64_t>(std::floor(k * bin_w)) + x1, 0, width);
                              const int64_t w1 = std::clamp<int64_t>(static_cast<int64_t>(std::ceil((k + 1) * bin_w)) + x1, 0, width);
                              C best = h1 > h0 && w1 > w0 ? std::numeric_limits<C>::lowest() : C{0};
                              for (int64_t h = h0; h < h1; ++h)
                                for (int64_t w = w0; w < w1; ++w) best = std::max(best, ToCompute(plane[h * width + w]));
                              out[i * pw + k] = FromCompute<T>(best);
                            }
                          }
                        }
                      });
    });
  }

 private:
  std::vector<int64_t> pooled_;
  float spatial_scale_;
};

ONYX_CPU_KERNEL("MaxRoiPool", 1, 21, MaxRoiPool);
ONYX_CPU_KERNEL("MaxRoiPool", 22, kOpsetMax, MaxRoiPool);

}  // namespace
}  // namespace onyx
