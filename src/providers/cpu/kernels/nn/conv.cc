// Conv (opsets 1, 11, 22), com.microsoft FusedConv (ONNX Runtime's contrib op) and com.onyx
// FusedConv (adds Silu and HardSwish), one kernel class:
//   y = activation(conv(X, W) + B + Z)       (activation and Z only for FusedConv)
// 1-D and 2-D float convolutions run on the linalg engines, chosen when the kernel is made and
// prepared from a constant W once: depthwise (group == C), Winograd F(4x4, 3x3) (3x3, stride 1,
// enough channels), GEMM (pointwise: the packed SGEMM straight on the NCHW input) or the direct
// blocked convolution (everything else). Bias, Z and the activation are fused into each
// engine's epilogue. float16/bfloat16 compute in float and round once; double and 3-D
// convolutions take im2col + GEMM. ONYX_CONV_ALGO=direct|gemm|winograd|depthwise forces a path
// where it applies (tests, benchmarks).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "base/type_traits.h"
#include "linalg/conv.h"
#include "platform/thread_pool.h"
#include "providers/cpu/kernels/linalg/packed_weights.h"
#include "providers/cpu/kernels/nn/conv_common.h"
#include "providers/cpu/kernels/nn/conv_shape.h"
#include "providers/cpu/kernels/nn/window_geometry.h"
#include "providers/cpu/kernels/quantization/qdq_neighbours.h"
#include "providers/kernel.h"
#include "providers/kernel_variant.h"

namespace onyx {
namespace {

using linalg::ConvActivation;
using nn::WindowGeometry;

using ConvAlgo = linalg::ConvAlgorithm;
enum class ConvFlavor { kConv, kMicrosoftFused, kOnyxFused };

// FusedConv's activation and activation_params as ONNX Runtime 1.30 reads them: Relu, Tanh and
// Sigmoid take no parameters; LeakyRelu takes [alpha]; Clip [min, max]; HardSigmoid
// [alpha, beta], exactly that many. com.onyx adds Silu and HardSwish (no parameters), which
// ONNX Runtime's FusedConv rejects.
ConvActivation ParseActivation(const KernelInfo& info, ConvFlavor flavor) {
  ConvActivation act;
  if (flavor == ConvFlavor::kConv || !info.HasAttr("activation")) return act;
  const std::string name = info.GetString("activation");
  const bool onyx = flavor == ConvFlavor::kOnyxFused;
  size_t params = 0;
  if (name == "Relu") act.kind = ConvActivation::kRelu;
  else if (name == "Tanh") act.kind = ConvActivation::kTanh;
  else if (name == "Sigmoid") act.kind = ConvActivation::kSigmoid;
  else if (name == "LeakyRelu") act.kind = ConvActivation::kLeakyRelu, params = 1;
  else if (name == "Clip") act.kind = ConvActivation::kClip, params = 2;
  else if (name == "HardSigmoid") act.kind = ConvActivation::kHardSigmoid, params = 2;
  else if (name == "Silu" && onyx) act.kind = ConvActivation::kSilu;
  else if (name == "HardSwish" && onyx) act.kind = ConvActivation::kHardSwish;
  else
    info.Fail(StrCat("activation '", name, "' is not supported (Relu, Tanh, Sigmoid, LeakyRelu, Clip, HardSigmoid",
                     onyx ? ", Silu, HardSwish)" : "; Silu and HardSwish only in com.onyx FusedConv)"));
  if (params > 0) {
    const std::vector<float> values = info.GetFloatsOr("activation_params", {});
    if (values.size() != params)
      info.Fail(StrCat("activation ", name, " needs ", params, " activation_params, got ", values.size()));
    act.alpha = values[0];
    if (params > 1) act.beta = values[1];
  }
  return act;
}

// The activation in compute type C (double keeps double).
template <typename C>
C Activate(C v, const ConvActivation& a) {
  if constexpr (std::is_same_v<C, float>) {
    return linalg::ActivateScalar(v, a);
  } else {
    switch (a.kind) {
      case ConvActivation::kNone: return v;
      case ConvActivation::kRelu: return v > 0 ? v : C{0};
      case ConvActivation::kClip: return std::min<C>(std::max<C>(v, a.alpha), a.beta);
      case ConvActivation::kLeakyRelu: return v < 0 ? C(a.alpha) * v : v;
      case ConvActivation::kHardSigmoid: return std::max<C>(0, std::min<C>(1, C(a.alpha) * v + C(a.beta)));
      case ConvActivation::kSigmoid: return C{1} / (C{1} + std::exp(-v));
      case ConvActivation::kTanh: return std::tanh(v);
      case ConvActivation::kSilu: return v / (C{1} + std::exp(-v));
      case ConvActivation::kHardSwish: return v * std::max<C>(0, std::min<C>(1, v / C{6} + C{0.5}));
    }
    return v;
  }
}

struct ConvProblem {
  int64_t batch = 0, in_channels = 0, out_channels = 0, group = 1;
  WindowGeometry g;
};

// y = conv(x, w) + bias by im2col + GEMM for compute type C; w is [M, C/group, k...].
template <typename C>
void RunGemmConv(const ConvProblem& p, const C* x, const C* w, const C* bias, C* y, ThreadPool* pool) {
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
    col.resize(static_cast<size_t>(kdim * std::min(tile, out_size)));
    for (int64_t p0 = 0; p0 < out_size; p0 += tile) {
      const int64_t p1 = std::min(out_size, p0 + tile);
      nn::Im2Col(xg, cg, g, p0, p1, col.data(), tp);
      nn::GemmNN<C>(mg, p1 - p0, kdim, wg, kdim, col.data(), p1 - p0, acc, yg + p0, out_size, tp);
    }
  };

  const double cost = 2.0 * static_cast<double>(mg * kdim) * static_cast<double>(out_size);
  nn::ForEachImageGroup<C>(p.batch, p.group, cost, pool, one);
}

// The 2-D shape of a 1-D or 2-D convolution (1-D as height 1).
linalg::Conv2dShape MakeShape(const ConvProblem& p) {
  return nn::ToConv2dShape(p.g, p.batch, p.in_channels, p.out_channels, p.group);
}

// The float engine for a weight: made once for a constant W, else per run.
struct FloatEngine {
  ConvAlgo algo = ConvAlgo::kGemm;
  const char* isa = "";  // the convolution kernels' ISA when it was made (static text)
  linalg::GemmConv gemm;
  linalg::DirectConv direct;
  linalg::DepthwiseConv depthwise;
  linalg::WinogradConv winograd;

  bool Supports(const linalg::Conv2dShape& s, const linalg::ConvRunArgs& args) const {
    switch (algo) {
      case ConvAlgo::kGemm: return gemm.Supports(s, args);
      case ConvAlgo::kDirect: return direct.Supports(s, args);
      case ConvAlgo::kDepthwise: return depthwise.Supports(s, args);
      case ConvAlgo::kWinograd: return winograd.Supports(s, args);
      default: return false;
    }
  }
  void Run(const linalg::Conv2dShape& s, const float* x, float* y, const linalg::ConvRunArgs& args,
           ThreadPool* pool) const {
    switch (algo) {
      case ConvAlgo::kGemm: gemm.Run(s, x, y, args, pool); break;
      case ConvAlgo::kDirect: direct.Run(s, x, y, args, pool); break;
      case ConvAlgo::kDepthwise: depthwise.Run(s, x, y, args, pool); break;
      case ConvAlgo::kWinograd: winograd.Run(s, x, y, args, pool); break;
      default: break;
    }
  }
};

// The path, by linalg's rule (ChooseConvAlgorithm, which onyx explain calls too).
ConvAlgo ChooseAlgo(ConvAlgo forced, const linalg::Conv2dShape& s, bool exact, int64_t out_plane = -1) {
  return linalg::ChooseConvAlgorithm(forced, s, exact, out_plane).algorithm;
}

// source (may be null): where the engine's packs come from (the creation cache's store).
std::shared_ptr<FloatEngine> MakeEngine(ConvAlgo algo, const linalg::Conv2dShape& s, const float* w,
                                        ThreadPool* pool, const linalg::PackSource* source = nullptr) {
  auto e = std::make_shared<FloatEngine>();
  e->algo = algo;
  e->isa = linalg::ConvIsaName();
  switch (algo) {
    case ConvAlgo::kGemm: e->gemm = linalg::GemmConv(s, w, source); break;
    case ConvAlgo::kDirect: e->direct = linalg::DirectConv(s, w, source); break;
    case ConvAlgo::kDepthwise: e->depthwise = linalg::DepthwiseConv(s, w, source); break;
    case ConvAlgo::kWinograd: e->winograd = linalg::WinogradConv(s, w, pool, source); break;
    default: break;
  }
  return e;
}

class Conv final : public OpKernel {
 public:
  Conv(const KernelInfo& info, ConvFlavor flavor)
      : attrs_(nn::ParseWindowAttrs(info)),
        group_(info.GetIntOr("group", 1)),
        flavor_(flavor),
        activation_(ParseActivation(info, flavor)),
        forced_(linalg::ConvAlgorithmFromEnvironment()),
        gemm_kernel_(linalg::SgemmKernelName()),
        exact_(IsBetweenQuantizeNodes(info)) {
    if (group_ < 1) info.Fail(StrCat("group must be >= 1, got ", group_));
    const Tensor* w = info.ConstantInput(1);
    if (w == nullptr) return;
    prepared_weight_ = nn::ToComputeTensor(*w);
    // A constant float-like 3-D/4-D weight: prepare its engine now.
    if (prepared_weight_.dtype() != DataType::kFloat || (w->rank() != 3 && w->rank() != 4) || w->dim(0) % group_ != 0)
      return;
    const linalg::Conv2dShape s = WeightShape(w->shape());
    const linalg::PackSource source = linalg_kernels::PackSourceFor(info, 1);
    engine_ = MakeEngine(ChooseAlgo(forced_, s, exact_, StaticOutputPlane(info, s)), s, prepared_weight_.data<float>(),
                         info.thread_pool(), &source);
    // The engine's packed form replaces W (an engine supports every input W admits).
    prepared_weight_ = Tensor();
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& w = ctx.required_input(1);
    const Tensor* b = ctx.input(2);
    const Tensor* z = flavor_ != ConvFlavor::kConv ? ctx.input(3) : nullptr;
    if (w.dtype() != x.dtype() || (b != nullptr && b->dtype() != x.dtype()) || (z != nullptr && z->dtype() != x.dtype()))
      ctx.Fail("X, W, B (and Z) must have the same element type");
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
    if (z != nullptr && z->shape() != y_shape)
      ctx.Fail(StrCat("Z must have the output's shape ", ShapeToString(y_shape), ", got ", ShapeToString(z->shape())));
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), y_shape);
    if (y.size() == 0) return;

    Dispatch(FloatTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      std::vector<C> x_buf, w_buf, b_buf, z_buf, y_buf;
      const C* xp = nn::ComputeView<T, C>(x, x_buf);
      const C* bp = b != nullptr ? nn::ComputeView<T, C>(*b, b_buf) : nullptr;
      const C* zp = z != nullptr ? nn::ComputeView<T, C>(*z, z_buf) : nullptr;
      C* yp = nn::ComputeOutput<T, C>(y, y_buf);
      auto weights = [&]() -> const C* {
        return prepared_weight_.defined() && prepared_weight_.dtype() == DataTypeOf<C>()
                   ? prepared_weight_.data<C>()
                   : nn::ComputeView<T, C>(w, w_buf);
      };
      bool done = false;
      if (p.in_channels == 0) {
        // A sum over no input channels: each output is its channel's bias (or 0). The tiled
        // kernels divide by the channel count (a fuzzed [3, 0, 5] input stopped on SIGFPE).
        const int64_t spatial = y.size() / (p.batch * p.out_channels);
        for (int64_t n = 0; n < p.batch; ++n)
          for (int64_t m = 0; m < p.out_channels; ++m)
            std::fill_n(yp + (n * p.out_channels + m) * spatial, spatial, bp != nullptr ? bp[m] : C(0));
        ApplyEpilogue(zp, yp, y.size(), ctx.thread_pool());
        done = true;
      }
      if constexpr (std::is_same_v<C, float>) {
        if (!done && p.g.rank() <= 2) done = RunFloat(p, xp, weights, bp, zp, yp, ctx.thread_pool());
      }
      if (!done) {
        NoteKernelVariant(std::is_same_v<C, float> ? "gemm im2col" : "im2col and row loops in double",
                          std::is_same_v<C, float> ? gemm_kernel_.c_str() : "scalar");
        RunGemmConv<C>(p, xp, weights(), bp, yp, ctx.thread_pool());
        ApplyEpilogue(zp, yp, y.size(), ctx.thread_pool());
      }
      nn::StoreFromCompute(yp, y.size(), y.data<T>());
    });
  }

 private:
  linalg::Conv2dShape WeightShape(const Shape& w_shape) const {
    linalg::Conv2dShape s;
    s.out_channels = w_shape[0];
    s.group = group_;
    s.in_channels = w_shape[1] * group_;
    s.kernel_w = w_shape.back();
    s.kernel_h = w_shape.size() == 4 ? w_shape[2] : 1;
    const size_t r = w_shape.size() - 2;
    auto at = [&](const std::vector<int64_t>& v, size_t d) { return v.size() == r ? v[d] : 1; };
    s.stride_w = at(attrs_.strides, r - 1);
    s.dilation_w = at(attrs_.dilations, r - 1);
    if (r == 2) {
      s.stride_h = at(attrs_.strides, 0);
      s.dilation_h = at(attrs_.dilations, 0);
    }
    return s;
  }

  // Output pixels per channel when the input's spatial size is static, else -1.
  int64_t StaticOutputPlane(const KernelInfo& info, const linalg::Conv2dShape& w_shape) const {
    const std::shared_ptr<const TypeInfo> t = info.InputType(0);
    if (t == nullptr || !t->shape.has_value()) return -1;
    const std::vector<Dim>& d = *t->shape;
    const size_t r = d.size();
    if (r != 3 && r != 4) return -1;
    int64_t plane = 1;
    for (size_t i = 2; i < r; ++i) {
      if (!d[i].known()) return -1;
      const size_t a = i - 2;  // attribute index
      const int64_t in = d[i].value, k = r == 4 && a == 0 ? w_shape.kernel_h : w_shape.kernel_w;
      const int64_t stride = r == 4 && a == 0 ? w_shape.stride_h : w_shape.stride_w;
      const int64_t dil = r == 4 && a == 0 ? w_shape.dilation_h : w_shape.dilation_w;
      int64_t out;
      if (attrs_.auto_pad == nn::AutoPad::kSameUpper || attrs_.auto_pad == nn::AutoPad::kSameLower) {
        out = (in + stride - 1) / stride;
      } else {
        const int64_t pads = attrs_.auto_pad == nn::AutoPad::kNotSet && attrs_.pads.size() == 2 * (r - 2)
                                 ? attrs_.pads[a] + attrs_.pads[a + r - 2]
                                 : 0;
        const int64_t span = in + pads - (k - 1) * dil - 1;
        if (span < 0) return -1;
        out = span / stride + 1;
      }
      plane *= out;
    }
    return plane;
  }

  // The linalg engines; false when the problem needs the GEMM path.
  template <typename WeightFn>
  bool RunFloat(const ConvProblem& p, const float* x, WeightFn&& weights, const float* bias, const float* z, float* y,
                ThreadPool* pool) const {
    const linalg::Conv2dShape s = MakeShape(p);
    linalg::ConvRunArgs args;
    args.bias = bias;
    args.residual = z;
    args.activation = activation_;
    if (engine_ != nullptr && engine_->Supports(s, args)) {
      NoteVariant(*engine_, s);
      engine_->Run(s, x, y, args, pool);
      return true;
    }
    const std::shared_ptr<FloatEngine> engine = MakeEngine(ChooseAlgo(forced_, s, exact_), s, weights(), pool);
    if (!engine->Supports(s, args)) return false;
    NoteVariant(*engine, s);
    engine->Run(s, x, y, args, pool);
    return true;
  }

  // For the profile: the engine and its ISA (GEMM engines run the SGEMM microkernel); static or
  // kernel-owned text, so this costs two stores.
  void NoteVariant(const FloatEngine& e, const linalg::Conv2dShape& s) const {
    NoteKernelVariant(linalg::ConvAlgorithmName(e.algo, s), e.algo == ConvAlgo::kGemm ? gemm_kernel_.c_str() : e.isa);
  }

  // Z and the activation after the GEMM path (the bias is already in).
  template <typename C>
  void ApplyEpilogue(const C* z, C* y, int64_t count, ThreadPool* pool) const {
    if (z == nullptr && activation_.kind == ConvActivation::kNone) return;
    if constexpr (std::is_same_v<C, float>) {
      linalg::ApplyConvEpilogue(y, 1, 1, count, nullptr, z, activation_, pool);
    } else {
      ThreadPool::For(pool, count, 8.0, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) y[i] = Activate<C>(z != nullptr ? y[i] + z[i] : y[i], activation_);
      });
    }
  }

  nn::WindowAttrs attrs_;
  int64_t group_;
  ConvFlavor flavor_;
  ConvActivation activation_;
  ConvAlgo forced_;
  std::string gemm_kernel_;               // the SGEMM microkernel when the kernel was made
  bool exact_;                            // no Winograd (IsBetweenQuantizeNodes)
  Tensor prepared_weight_;                // W in its compute type when W is a constant
  std::shared_ptr<FloatEngine> engine_;  // prepared from a constant float W
};

std::unique_ptr<OpKernel> MakeConv(const KernelInfo& info) { return std::make_unique<Conv>(info, ConvFlavor::kConv); }
std::unique_ptr<OpKernel> MakeMicrosoftFusedConv(const KernelInfo& info) {
  return std::make_unique<Conv>(info, ConvFlavor::kMicrosoftFused);
}
std::unique_ptr<OpKernel> MakeOnyxFusedConv(const KernelInfo& info) {
  return std::make_unique<Conv>(info, ConvFlavor::kOnyxFused);
}

ONYX_REGISTER_KERNEL_FN("CPU", "", "Conv", 1, 10, MakeConv);
ONYX_REGISTER_KERNEL_FN("CPU", "", "Conv", 11, 21, MakeConv);
ONYX_REGISTER_KERNEL_FN("CPU", "", "Conv", 22, kOpsetMax, MakeConv);
ONYX_REGISTER_KERNEL_FN("CPU", "com.microsoft", "FusedConv", 1, kOpsetMax, MakeMicrosoftFusedConv);
ONYX_REGISTER_KERNEL_FN("CPU", "com.onyx", "FusedConv", 1, kOpsetMax, MakeOnyxFusedConv);

}  // namespace
}  // namespace onyx
