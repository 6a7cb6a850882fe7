// AffineGrid (opset 20): the sampling grid of an affine transform, for GridSample.
// theta [N, 2, 3] with size [N, C, H, W] gives grid [N, H, W, 2]; theta [N, 3, 4] with size
// [N, C, D, H, W] gives grid [N, D, H, W, 3]. Each output point is theta applied to the
// normalized base coordinate (x, y[, z], 1) of its pixel centre (align_corners: of its corner
// pixels, so -1 and 1 land on the first and last pixel).
#include <vector>

#include "base/type_traits.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

// The normalized coordinates of `len` pixels along one axis.
std::vector<double> BaseCoords(int64_t len, bool align_corners) {
  std::vector<double> v(static_cast<size_t>(len));
  for (int64_t i = 0; i < len; ++i) {
    if (align_corners)
      v[i] = len == 1 ? -1.0 : -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(len - 1);
    else
      v[i] = (2.0 * static_cast<double>(i) + 1.0) / static_cast<double>(len) - 1.0;
  }
  return v;
}

class AffineGrid final : public OpKernel {
 public:
  explicit AffineGrid(const KernelInfo& info) : align_corners_(info.GetIntOr("align_corners", 0) != 0) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& theta = ctx.required_input(0);
    const Tensor& size = ctx.required_input(1);
    if (size.dtype() != DataType::kInt64 || size.rank() != 1 || (size.size() != 4 && size.size() != 5))
      ctx.Fail("size must be an int64 tensor [N, C, H, W] or [N, C, D, H, W]");
    const int64_t* sz = size.data<int64_t>();
    const int64_t r = size.size() - 2;  // spatial dims: 2 or 3
    const int64_t n = sz[0];
    if (theta.rank() != 3 || theta.dim(0) != n || theta.dim(1) != r || theta.dim(2) != r + 1)
      ctx.Fail(StrCat("theta must be [N, ", r, ", ", r + 1, "] for this size"));
    Shape out_shape = {n};
    for (int64_t d = 0; d < r; ++d) {
      if (sz[2 + d] < 0) ctx.Fail("size must be non-negative");
      out_shape.push_back(sz[2 + d]);
    }
    out_shape.push_back(r);
    Tensor& y = ctx.AllocateOutput(0, theta.dtype(), out_shape);
    if (y.size() == 0) return;
    // Base coordinates per axis, in x (last dim), y, z order.
    std::vector<std::vector<double>> base;
    for (int64_t k = 0; k < r; ++k) base.push_back(BaseCoords(sz[2 + r - 1 - k], align_corners_));
    const int64_t points = y.size() / (n * r);
    Dispatch(FloatTypes{}, theta.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* th = theta.data<T>();
      T* py = y.data<T>();
      for (int64_t b = 0; b < n; ++b) {
        double m[3][4] = {};
        for (int64_t i = 0; i < r; ++i)
          for (int64_t j = 0; j <= r; ++j) m[i][j] = static_cast<double>(ToCompute(th[(b * r + i) * (r + 1) + j]));
        for (int64_t p = 0; p < points; ++p) {
          // p walks the spatial dims row-major; coordinate k (x first) comes from dim r-1-k.
          double c[3] = {0.0, 0.0, 0.0};
          int64_t rem = p;
          for (int64_t k = 0; k < r; ++k) {
            const int64_t len = sz[2 + r - 1 - k];
            c[k] = base[k][rem % len];
            rem /= len;
          }
          T* out = py + (b * points + p) * r;
          for (int64_t i = 0; i < r; ++i) {
            double v = m[i][r];
            for (int64_t k = 0; k < r; ++k) v += m[i][k] * c[k];
            out[i] = FromCompute<T>(static_cast<ComputeType<T>>(v));
          }
        }
      }
    });
  }

 private:
  bool align_corners_;
};

ONYX_CPU_KERNEL("AffineGrid", 20, kOpsetMax, AffineGrid);

}  // namespace
}  // namespace onyx
