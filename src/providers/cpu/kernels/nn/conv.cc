// Conv (opsets 1, 11, 22) over any number of spatial dims: im2col + one GEMM per group and
// image, skipping im2col for pointwise (1x1, stride 1, unpadded) convolutions. A constant
// weight is prepared once when the kernel is created; per-run buffers live in Compute.
// Float runs on linalg::Sgemm, double in double, float16/bfloat16 in float rounded once.
#include <algorithm>
#include <vector>

#include "base/type_traits.h"
#include "platform/thread_pool.h"
#include "providers/cpu/kernels/nn/conv_common.h"
#include "providers/cpu/kernels/nn/window_geometry.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

using nn::WindowGeometry;

struct ConvProblem {
  int64_t batch = 0, in_channels = 0, out_channels = 0, group = 1;
  WindowGeometry g;
};

// y = conv(x, w) + bias for compute type C; w is [M, C/group, k...] row-major.
template <typename C>
void RunConv(const ConvProblem& p, const C* x, const C* w, const C* bias, C* y, ThreadPool* pool) {
  const WindowGeometry& g = p.g;
  const int64_t cg = p.in_channels / p.group, mg = p.out_channels / p.group;
  const int64_t kdim = cg * g.KernelSize();
  const int64_t in_size = g.InSize(), out_size = g.OutSize();
  if (out_size == 0 || mg == 0) return;
  const bool pointwise = g.IsPointwise();
  const int64_t tile = nn::ColumnsPerTile(kdim, sizeof(C), out_size);

  auto one = [&](int64_t n, int64_t gi, std::vector<C>& col, ThreadPool* tp) {
    const C* xg = x + (n * p.in_channels + gi * cg) * in_size;
    const C* wg = w + gi * mg * kdim;
    C* yg = y + (n * p.out_channels + gi * mg) * out_size;
    // The bias seeds the output and the GEMM accumulates onto it.
    if (bias != nullptr)
      for (int64_t m = 0; m < mg; ++m) std::fill(yg + m * out_size, yg + (m + 1) * out_size, bias[gi * mg + m]);
    const bool acc = bias != nullptr;
    if (pointwise) {
      nn::GemmNN<C>(mg, out_size, kdim, wg, kdim, xg, in_size, acc, yg, out_size, tp);
      return;
    }
    // Column tiles bound the im2col buffer for big images.
    col.resize(static_cast<size_t>(kdim * std::min(tile, out_size)));
    for (int64_t p0 = 0; p0 < out_size; p0 += tile) {
      const int64_t p1 = std::min(out_size, p0 + tile);
      nn::Im2Col(xg, cg, g, p0, p1, col.data(), tp);
      nn::GemmNN<C>(mg, p1 - p0, kdim, wg, kdim, col.data(), p1 - p0, acc, yg + p0, out_size, tp);
    }
  };

  const int64_t jobs = p.batch * p.group;
  const int threads = pool != nullptr ? pool->num_threads() : 1;
  if (p.group > 1 && jobs >= threads) {
    // Many small GEMMs (grouped / depthwise): one (image, group) per task.
    const double cost = 2.0 * static_cast<double>(mg * kdim) * static_cast<double>(out_size);
    ThreadPool::For(pool, jobs, cost, [&](int64_t begin, int64_t end) {
      std::vector<C> col;
      for (int64_t j = begin; j < end; ++j) one(j / p.group, j % p.group, col, nullptr);
    });
  } else {
    std::vector<C> col;
    for (int64_t n = 0; n < p.batch; ++n)
      for (int64_t gi = 0; gi < p.group; ++gi) one(n, gi, col, pool);
  }
}

class Conv final : public OpKernel {
 public:
  explicit Conv(const KernelInfo& info) : attrs_(nn::ParseWindowAttrs(info)), group_(info.GetIntOr("group", 1)) {
    if (group_ < 1) info.Fail(StrCat("group must be >= 1, got ", group_));
    if (const Tensor* w = info.ConstantInput(1)) prepared_weight_ = nn::ToComputeTensor(*w);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& w = ctx.required_input(1);
    const Tensor* b = ctx.input(2);
    if (w.dtype() != x.dtype() || (b != nullptr && b->dtype() != x.dtype()))
      ctx.Fail("X, W and B must have the same element type");
    if (x.rank() < 3) ctx.Fail("X must have rank >= 3 (N, C, spatial...)");
    if (w.rank() != x.rank()) ctx.Fail("W must have the same rank as X");
    ConvProblem p;
    p.batch = x.dim(0);
    p.in_channels = x.dim(1);
    p.out_channels = w.dim(0);
    p.group = group_;
    if (p.out_channels % group_ != 0)
      ctx.Fail(StrCat("the output channels (", p.out_channels, ") are not divisible by group ", group_));
    if (w.dim(1) * group_ != p.in_channels)
      ctx.Fail(StrCat("W has ", w.dim(1), " input channels per group, X has ", p.in_channels, " channels for group ",
                      group_));
    const std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
    if (!attrs_.kernel_shape.empty() && attrs_.kernel_shape != kernel)
      ctx.Fail(StrCat("kernel_shape [", StrJoin(attrs_.kernel_shape), "] differs from W's spatial dims"));
    if (b != nullptr && (b->rank() != 1 || b->dim(0) != p.out_channels))
      ctx.Fail(StrCat("B must have shape [", p.out_channels, "]"));
    p.g = nn::ResolveForwardWindow(attrs_, x.shape(), kernel, ctx);

    Shape y_shape = {p.batch, p.out_channels};
    y_shape.insert(y_shape.end(), p.g.out.begin(), p.g.out.end());
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), y_shape);
    if (y.size() == 0) return;

    Dispatch(FloatTypes{}, x.dtype(), ctx.node().Describe(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      std::vector<C> x_buf, w_buf, b_buf, y_buf;
      const C* xp = nn::ComputeView<T, C>(x, x_buf);
      const C* wp = prepared_weight_.defined() && prepared_weight_.dtype() == DataTypeOf<C>()
                        ? prepared_weight_.data<C>()
                        : nn::ComputeView<T, C>(w, w_buf);
      const C* bp = b != nullptr ? nn::ComputeView<T, C>(*b, b_buf) : nullptr;
      C* yp;
      if constexpr (std::is_same_v<T, C>) {
        yp = y.data<C>();
      } else {
        y_buf.resize(static_cast<size_t>(y.size()));
        yp = y_buf.data();
      }
      RunConv<C>(p, xp, wp, bp, yp, ctx.thread_pool());
      nn::StoreFromCompute(yp, y.size(), y.data<T>());
    });
  }

 private:
  nn::WindowAttrs attrs_;
  int64_t group_;
  Tensor prepared_weight_;  // W in its compute type when W is a constant
};

ONYX_CPU_KERNEL("Conv", 1, 10, Conv);
ONYX_CPU_KERNEL("Conv", 11, 21, Conv);
ONYX_CPU_KERNEL("Conv", 22, kOpsetMax, Conv);

}  // namespace
}  // namespace onyx
