// DeformConv (opsets 19, 22): a convolution whose taps are shifted by learned per-position
// offsets (and optionally scaled by a mask). The shifted taps are sampled with N-linear
// interpolation (zero outside the image) into an im2col buffer, then one GEMM per group.
#include <algorithm>
#include <cmath>
#include <vector>

#include "base/type_traits.h"
#include "platform/thread_pool.h"
#include "providers/cpu/kernels/nn/conv_common.h"
#include "providers/cpu/kernels/nn/window_geometry.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

using nn::WindowGeometry;

// Interpolated value of `image` (dims `in`) at fractional coordinates `pos`.
template <typename C>
C Sample(const C* image, const std::vector<int64_t>& in, const C* pos, size_t r) {
  if (r == 2) {
    const C y = pos[0], x = pos[1];
    const int64_t h = in[0], w = in[1];
    if (!(y > -1 && y < static_cast<C>(h) && x > -1 && x < static_cast<C>(w))) return C{0};
    const int64_t y0 = static_cast<int64_t>(std::floor(y)), x0 = static_cast<int64_t>(std::floor(x));
    const C fy = y - static_cast<C>(y0), fx = x - static_cast<C>(x0);
    auto at = [&](int64_t yy, int64_t xx) { return yy >= 0 && yy < h && xx >= 0 && xx < w ? image[yy * w + xx] : C{0}; };
    return (1 - fy) * ((1 - fx) * at(y0, x0) + fx * at(y0, x0 + 1)) + fy * ((1 - fx) * at(y0 + 1, x0) + fx * at(y0 + 1, x0 + 1));
  }
  for (size_t d = 0; d < r; ++d)
    if (!(pos[d] > -1 && pos[d] < static_cast<C>(in[d]))) return C{0};  // also NaN
  C result = 0;
  for (uint32_t corner = 0; corner < (1u << r); ++corner) {
    C weight = 1;
    int64_t offset = 0;
    bool inside = true;
    for (size_t d = 0; d < r && inside; ++d) {
      const C fl = std::floor(pos[d]);
      const int64_t i = static_cast<int64_t>(fl) + ((corner >> d) & 1u);
      const C frac = pos[d] - fl;
      weight *= (corner >> d) & 1u ? frac : 1 - frac;
      inside = i >= 0 && i < in[d];
      offset = offset * in[d] + i;
    }
    if (inside && weight != 0) result += weight * image[offset];
  }
  return result;
}

class DeformConv final : public OpKernel {
 public:
  explicit DeformConv(const KernelInfo& info)
      : attrs_(nn::ParseWindowAttrs(info)),
        group_(info.GetIntOr("group", 1)),
        offset_group_(info.GetIntOr("offset_group", 1)) {
    if (group_ < 1) info.Fail(StrCat("group must be >= 1, got ", group_));
    if (offset_group_ < 1) info.Fail(StrCat("offset_group must be >= 1, got ", offset_group_));
    if (const Tensor* w = info.ConstantInput(1)) prepared_weight_ = nn::ToComputeTensor(*w);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& w = ctx.required_input(1);
    const Tensor& offset = ctx.required_input(2);
    const Tensor* b = ctx.input(3);
    const Tensor* mask = ctx.input(4);
    for (const Tensor* t : {&w, &offset, b, mask})
      if (t != nullptr && t->dtype() != x.dtype()) ctx.Fail("all inputs must have X's element type");
    if (x.rank() < 3 || w.rank() != x.rank()) ctx.Fail("X and W must have the same rank >= 3");
    const int64_t batch = x.dim(0), in_ch = x.dim(1), out_ch = w.dim(0);
    if (out_ch % group_ != 0 || w.dim(1) * group_ != in_ch)
      ctx.Fail(StrCat("W's shape does not fit X's ", in_ch, " channels with group ", group_));
    if (in_ch % offset_group_ != 0) ctx.Fail(StrCat("channels are not divisible by offset_group ", offset_group_));
    const std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
    if (!attrs_.kernel_shape.empty() && attrs_.kernel_shape != kernel)
      ctx.Fail(StrCat("kernel_shape [", StrJoin(attrs_.kernel_shape), "] differs from W's spatial dims"));
    const WindowGeometry g = nn::ResolveForwardWindow(attrs_, x.shape(), kernel, ctx);
    const size_t r = g.rank();
    const int64_t ksize = g.KernelSize(), out_size = g.OutSize(), in_size = g.InSize();
    Shape want_offset = {batch, offset_group_ * ksize * static_cast<int64_t>(r)};
    want_offset.insert(want_offset.end(), g.out.begin(), g.out.end());
    if (offset.shape() != want_offset) ctx.Fail(StrCat("offset must have shape ", ShapeToString(want_offset)));
    if (mask != nullptr) {
      Shape want_mask = want_offset;
      want_mask[1] = offset_group_ * ksize;
      if (mask->shape() != want_mask) ctx.Fail(StrCat("mask must have shape ", ShapeToString(want_mask)));
    }
    if (b != nullptr && (b->rank() != 1 || b->dim(0) != out_ch)) ctx.Fail(StrCat("B must have shape [", out_ch, "]"));
    Shape y_shape = {batch, out_ch};
    y_shape.insert(y_shape.end(), g.out.begin(), g.out.end());
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), y_shape);
    if (y.size() == 0) return;

    Dispatch(FloatTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      std::vector<C> x_buf, w_buf, o_buf, m_buf, b_buf, y_buf;
      const C* xp = nn::ComputeView<T, C>(x, x_buf);
      const C* wp = prepared_weight_.defined() && prepared_weight_.dtype() == DataTypeOf<C>()
                        ? prepared_weight_.data<C>()
                        : nn::ComputeView<T, C>(w, w_buf);
      const C* op = nn::ComputeView<T, C>(offset, o_buf);
      const C* mp = mask != nullptr ? nn::ComputeView<T, C>(*mask, m_buf) : nullptr;
      const C* bp = b != nullptr ? nn::ComputeView<T, C>(*b, b_buf) : nullptr;
      C* yp = nn::ComputeOutput<T, C>(y, y_buf);
      const int64_t cg = in_ch / group_, mg = out_ch / group_, kdim = cg * ksize;
      const int64_t ch_per_og = in_ch / offset_group_;
      std::vector<C> col(static_cast<size_t>(kdim * out_size));
      for (int64_t n = 0; n < batch; ++n) {
        for (int64_t gi = 0; gi < group_; ++gi) {
          ThreadPool::For(ctx.thread_pool(), kdim, 20.0 * static_cast<double>(out_size), [&](int64_t begin, int64_t end) {
            std::vector<int64_t> koffs(r), opos(r);
            std::vector<C> pos(r);
            for (int64_t row = begin; row < end; ++row) {
              const int64_t ci = gi * cg + row / ksize, k = row % ksize;
              const int64_t og = ci / ch_per_og;
              nn::KernelOffsets(k, g.kernel, koffs.data());
              const C* image = xp + (n * in_ch + ci) * in_size;
              const C* off = op + ((n * offset_group_ + og) * ksize + k) * static_cast<int64_t>(r) * out_size;
              const C* m = mp != nullptr ? mp + ((n * offset_group_ + og) * ksize + k) * out_size : nullptr;
              C* dst = col.data() + row * out_size;
              std::fill(opos.begin(), opos.end(), 0);
              for (int64_t p = 0; p < out_size; ++p) {
                for (size_t d = 0; d < r; ++d)
                  pos[d] = static_cast<C>(opos[d] * g.stride[d] - g.pad_begin[d] + koffs[d] * g.dilation[d]) +
                           off[static_cast<int64_t>(d) * out_size + p];
                C v = Sample(image, g.in, pos.data(), r);
                if (m != nullptr) v *= m[p];
                dst[p] = v;
                for (size_t d = r; d-- > 0;) {
                  if (++opos[d] < g.out[d]) break;
                  opos[d] = 0;
                }
              }
            }
          });
          C* yg = yp + (n * out_ch + gi * mg) * out_size;
          if (bp != nullptr)
            for (int64_t m = 0; m < mg; ++m) std::fill(yg + m * out_size, yg + (m + 1) * out_size, bp[gi * mg + m]);
          nn::GemmNN<C>(mg, out_size, kdim, wp + gi * mg * kdim, kdim, col.data(), out_size, bp != nullptr, yg, out_size,
                        ctx.thread_pool());
        }
      }
      nn::StoreFromCompute(yp, y.size(), y.data<T>());
    });
  }

 private:
  nn::WindowAttrs attrs_;
  int64_t group_;
  int64_t offset_group_;
  Tensor prepared_weight_;
};

ONYX_CPU_KERNEL("DeformConv", 19, 21, DeformConv);
ONYX_CPU_KERNEL("DeformConv", 22, kOpsetMax, DeformConv);

}  // namespace
}  // namespace onyx
