// Col2Im (opset 18): rearranges columns [N, C * prod(block_shape), L] into images
// [N, C, image_shape...], summing overlapping blocks (the adjoint of im2col).
#include <vector>

#include "base/type_traits.h"
#include "providers/cpu/kernels/nn/window_geometry.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

std::vector<int64_t> ReadInt64s(const Tensor& t, const char* name, const KernelContext& ctx) {
  if (t.dtype() != DataType::kInt64 || t.rank() != 1) ctx.Fail(StrCat(name, " must be a 1-D int64 tensor"));
  return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.size());
}

class Col2Im final : public OpKernel {
 public:
  explicit Col2Im(const KernelInfo& info) : attrs_(nn::ParseWindowAttrs(info)) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const std::vector<int64_t> image = ReadInt64s(ctx.required_input(1), "image_shape", ctx);
    const std::vector<int64_t> block = ReadInt64s(ctx.required_input(2), "block_shape", ctx);
    const size_t r = image.size();
    if (r == 0 || block.size() != r) ctx.Fail("image_shape and block_shape must have the same, non-zero length");
    if (x.rank() != 3) ctx.Fail("input must have rank 3 (N, C * prod(block_shape), L)");
    nn::CheckWindowAttrRanks(attrs_, r, ctx);
    nn::WindowGeometry g;
    g.in = image;
    g.kernel = block;
    g.stride = attrs_.strides.empty() ? std::vector<int64_t>(r, 1) : attrs_.strides;
    g.dilation = attrs_.dilations.empty() ? std::vector<int64_t>(r, 1) : attrs_.dilations;
    g.pad_begin.assign(r, 0);
    g.pad_end.assign(r, 0);
    if (!attrs_.pads.empty()) {
      g.pad_begin.assign(attrs_.pads.begin(), attrs_.pads.begin() + r);
      g.pad_end.assign(attrs_.pads.begin() + r, attrs_.pads.end());
    }
    for (size_t d = 0; d < r; ++d) {
      if (image[d] < 0 || block[d] < 1) ctx.Fail("image_shape must be >= 0 and block_shape >= 1");
      const int64_t span = image[d] + g.pad_begin[d] + g.pad_end[d] - ((block[d] - 1) * g.dilation[d] + 1);
      if (span < 0) ctx.Fail(StrCat("the block does not fit the padded image in dimension ", d));
      g.out.push_back(span / g.stride[d] + 1);
    }
    const int64_t ksize = g.KernelSize();
    if (x.dim(1) % ksize != 0)
      ctx.Fail(StrCat("input dimension 1 (", x.dim(1), ") is not divisible by prod(block_shape) = ", ksize));
    if (x.dim(2) != g.OutSize())
      ctx.Fail(StrCat("input dimension 2 is ", x.dim(2), ", but the image holds ", g.OutSize(), " blocks"));
    const int64_t batch = x.dim(0), channels = x.dim(1) / ksize;
    Shape y_shape = {batch, channels};
    y_shape.insert(y_shape.end(), image.begin(), image.end());
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), y_shape);
    if (y.size() == 0) return;
    Dispatch(NumericTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      std::vector<C> cols(static_cast<size_t>(x.size())), img(static_cast<size_t>(y.size()), C{});
      const T* xp = x.data<T>();
      for (int64_t i = 0; i < x.size(); ++i) cols[i] = ToCompute(xp[i]);
      const int64_t col_image = channels * ksize * g.OutSize();
      for (int64_t n = 0; n < batch; ++n)
        nn::Col2ImAdd(cols.data() + n * col_image, channels, g, 0, g.OutSize(), img.data() + n * channels * g.InSize(),
                      ctx.thread_pool());
      T* yp = y.data<T>();
      for (int64_t i = 0; i < y.size(); ++i) yp[i] = FromCompute<T>(img[i]);
    });
  }

 private:
  nn::WindowAttrs attrs_;
};

ONYX_CPU_KERNEL("Col2Im", 18, kOpsetMax, Col2Im);

}  // namespace
}  // namespace onyx
