// ConvTranspose (opsets 1, 11, 22): per image and group one GEMM  col = W_g^T * X_g  followed
// by col2im into the output, over any number of spatial dims. The transposed weight is prepared
// once when W is a constant. Output size from output_shape, auto_pad or pads + output_padding.
#include <algorithm>
#include <vector>

#include "base/type_traits.h"
#include "platform/thread_pool.h"
#include "providers/cpu/kernels/nn/conv_common.h"
#include "providers/cpu/kernels/nn/window_geometry.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

using nn::AutoPad;
using nn::WindowGeometry;

// W [Cin, M/group, k...] rearranged per group into [M/group * K, Cin/group] (row-major), the
// left operand of col = Wt * X.
template <typename C>
void TransposeWeight(const C* w, int64_t in_channels, int64_t group, int64_t mk, C* wt) {
  const int64_t cg = in_channels / group;
  for (int64_t gi = 0; gi < group; ++gi) {
    const C* src = w + gi * cg * mk;
    C* dst = wt + gi * mk * cg;
    for (int64_t c = 0; c < cg; ++c)
      for (int64_t r = 0; r < mk; ++r) dst[r * cg + c] = src[c * mk + r];
  }
}

struct TransposeProblem {
  int64_t batch = 0, in_channels = 0, out_channels = 0, group = 1;
  WindowGeometry g;  // in: output image, out: input grid
};

template <typename C>
void RunConvTranspose(const TransposeProblem& p, const C* x, const C* wt, const C* bias, C* y, ThreadPool* pool) {
  const WindowGeometry& g = p.g;
  const int64_t cg = p.in_channels / p.group, mg = p.out_channels / p.group;
  const int64_t ksize = g.KernelSize(), mk = mg * ksize;
  const int64_t x_size = g.OutSize(), y_size = g.InSize();
  const bool pointwise = g.IsPointwise();
  const int64_t tile = nn::ColumnsPerTile(mk, sizeof(C), x_size);

  auto one = [&](int64_t n, int64_t gi, std::vector<C>& col, ThreadPool* tp) {
    const C* xg = x + (n * p.in_channels + gi * cg) * x_size;
    const C* wg = wt + gi * mk * cg;
    C* yg = y + (n * p.out_channels + gi * mg) * y_size;
    for (int64_t m = 0; m < mg; ++m)
      std::fill(yg + m * y_size, yg + (m + 1) * y_size, bias != nullptr ? bias[gi * mg + m] : C{});
    if (x_size == 0) return;
    if (pointwise) {
      nn::GemmNN<C>(mg, x_size, cg, wg, cg, xg, x_size, true, yg, y_size, tp);
      return;
    }
    // Column tiles (input positions) bound the col buffer; col2im accumulates tile by tile.
    col.resize(static_cast<size_t>(mk * std::min(tile, x_size)));
    for (int64_t p0 = 0; p0 < x_size; p0 += tile) {
      const int64_t p1 = std::min(x_size, p0 + tile);
      nn::GemmNN<C>(mk, p1 - p0, cg, wg, cg, xg + p0, x_size, false, col.data(), p1 - p0, tp);
      nn::Col2ImAdd(col.data(), mg, g, p0, p1, yg, tp);
    }
  };

  const double cost = 2.0 * static_cast<double>(mk * cg) * static_cast<double>(x_size);
  nn::ForEachImageGroup<C>(p.batch, p.group, cost, pool, one);
}

class ConvTranspose final : public OpKernel {
 public:
  explicit ConvTranspose(const KernelInfo& info)
      : attrs_(nn::ParseWindowAttrs(info)),
        group_(info.GetIntOr("group", 1)),
        output_padding_(info.GetIntsOr("output_padding", {})),
        output_shape_(info.GetIntsOr("output_shape", {})) {
    if (group_ < 1) info.Fail(StrCat("group must be >= 1, got ", group_));
    for (int64_t v : output_padding_)
      if (v < 0) info.Fail(StrCat("output_padding [", StrJoin(output_padding_), "] must not be negative"));
    for (int64_t v : output_shape_)
      if (v < 0) info.Fail(StrCat("output_shape [", StrJoin(output_shape_), "] must not be negative"));
    const Tensor* w = info.ConstantInput(1);
    if (w == nullptr || w->rank() < 3 || w->dim(0) % group_ != 0) return;
    const Tensor cw = nn::ToComputeTensor(*w);
    if (!cw.defined()) return;
    const int64_t mk = w->size() / std::max<int64_t>(w->dim(0), 1);
    TryDispatch(TypeList<float, double>{}, cw.dtype(), [&](auto tag) {
      using C = typename decltype(tag)::type;
      prepared_weight_ = Tensor(cw.dtype(), {w->size()});
      TransposeWeight<C>(cw.data<C>(), w->dim(0), group_, mk, prepared_weight_.data<C>());
    });
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& w = ctx.required_input(1);
    const Tensor* b = ctx.input(2);
    if (w.dtype() != x.dtype() || (b != nullptr && b->dtype() != x.dtype()))
      ctx.Fail("X, W and B must have the same element type");
    if (x.rank() < 3) ctx.Fail("X must have rank >= 3 (N, C, spatial...)");
    if (w.rank() != x.rank()) ctx.Fail("W must have the same rank as X");
    TransposeProblem p;
    p.batch = x.dim(0);
    p.in_channels = x.dim(1);
    p.group = group_;
    if (w.dim(0) != p.in_channels) ctx.Fail(StrCat("W's first dim must equal X's channels (", p.in_channels, ")"));
    if (p.in_channels % group_ != 0)
      ctx.Fail(StrCat("the input channels (", p.in_channels, ") are not divisible by group ", group_));
    p.out_channels = w.dim(1) * group_;
    if (b != nullptr && (b->rank() != 1 || b->dim(0) != p.out_channels))
      ctx.Fail(StrCat("B must have shape [", p.out_channels, "]"));
    p.g = Resolve(x, w, ctx);

    Shape y_shape = {p.batch, p.out_channels};
    y_shape.insert(y_shape.end(), p.g.in.begin(), p.g.in.end());
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), y_shape);
    if (y.size() == 0) return;

    Dispatch(FloatTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      std::vector<C> x_buf, w_buf, wt_buf, b_buf, y_buf;
      const C* xp = nn::ComputeView<T, C>(x, x_buf);
      const C* wt;
      if (prepared_weight_.defined() && prepared_weight_.dtype() == DataTypeOf<C>() &&
          prepared_weight_.size() == w.size()) {
        wt = prepared_weight_.data<C>();
      } else {
        const C* wp = nn::ComputeView<T, C>(w, w_buf);
        wt_buf.resize(static_cast<size_t>(w.size()));
        if (w.size() > 0) TransposeWeight<C>(wp, p.in_channels, group_, w.size() / p.in_channels, wt_buf.data());
        wt = wt_buf.data();
      }
      const C* bp = b != nullptr ? nn::ComputeView<T, C>(*b, b_buf) : nullptr;
      C* yp = nn::ComputeOutput<T, C>(y, y_buf);
      RunConvTranspose<C>(p, xp, wt, bp, yp, ctx.thread_pool());
      nn::StoreFromCompute(yp, y.size(), y.data<T>());
    });
  }

 private:
  // Output size and pads per spatial dim. Output d of the transposed conv of input i receives
  // taps at d = i * stride - pad_begin + k * dilation.
  WindowGeometry Resolve(const Tensor& x, const Tensor& w, const KernelContext& ctx) const {
    const size_t r = x.rank() - 2;
    nn::CheckWindowAttrRanks(attrs_, r, ctx);
    const std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
    if (!attrs_.kernel_shape.empty() && attrs_.kernel_shape != kernel)
      ctx.Fail(StrCat("kernel_shape [", StrJoin(attrs_.kernel_shape), "] differs from W's spatial dims"));
    if (!output_padding_.empty() && output_padding_.size() != r)
      ctx.Fail(StrCat("output_padding has ", output_padding_.size(), " values, expected ", r));
    if (!output_shape_.empty() && output_shape_.size() != r && output_shape_.size() != r + 2)
      ctx.Fail(StrCat("output_shape has ", output_shape_.size(), " values, expected ", r));
    WindowGeometry g;
    g.out.assign(x.shape().begin() + 2, x.shape().end());
    g.kernel = kernel;
    g.stride = attrs_.strides.empty() ? std::vector<int64_t>(r, 1) : attrs_.strides;
    g.dilation = attrs_.dilations.empty() ? std::vector<int64_t>(r, 1) : attrs_.dilations;
    g.in.assign(r, 0);
    g.pad_begin.assign(r, 0);
    g.pad_end.assign(r, 0);
    const bool same = attrs_.auto_pad == AutoPad::kSameUpper || attrs_.auto_pad == AutoPad::kSameLower;
    for (size_t d = 0; d < r; ++d) {
      const int64_t in = g.out[d], s = g.stride[d];
      const int64_t out_pad = output_padding_.empty() ? 0 : output_padding_[d];
      const int64_t full = s * (in - 1) + out_pad + (kernel[d] - 1) * g.dilation[d] + 1;
      if (!output_shape_.empty() || same) {
        // The target size fixes the total padding; SAME_UPPER puts the odd unit at the end.
        const int64_t target = !output_shape_.empty() ? output_shape_[output_shape_.size() - r + d] : in * s;
        const int64_t total = full - target;
        const int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2);  // floor(total / 2)
        g.pad_begin[d] = attrs_.auto_pad == AutoPad::kSameUpper ? half : total - half;
        g.pad_end[d] = total - g.pad_begin[d];
        g.in[d] = target;
      } else {
        if (attrs_.auto_pad == AutoPad::kNotSet && !attrs_.pads.empty()) {
          g.pad_begin[d] = attrs_.pads[d];
          g.pad_end[d] = attrs_.pads[d + r];
        }
        g.in[d] = full - g.pad_begin[d] - g.pad_end[d];
        if (g.in[d] < 0)
          ctx.Fail(StrCat("the pads make output spatial dimension ", d, " negative (", g.in[d], ")"));
      }
    }
    return g;
  }

  nn::WindowAttrs attrs_;
  int64_t group_;
  std::vector<int64_t> output_padding_;
  std::vector<int64_t> output_shape_;
  Tensor prepared_weight_;  // per group [M/group * K, C/group] in the compute type, when W is constant
};

ONYX_CPU_KERNEL("ConvTranspose", 1, 10, ConvTranspose);
ONYX_CPU_KERNEL("ConvTranspose", 11, 21, ConvTranspose);
ONYX_CPU_KERNEL("ConvTranspose", 22, kOpsetMax, ConvTranspose);

}  // namespace
}  // namespace onyx
