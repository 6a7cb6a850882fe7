// Convolution on channel-blocked activations, for a layout pass that reorders once at the ends of
// a chain of convolutions instead of around every one (com.onyx domain, Onyx-own ops):
//   ReorderToNchwc(X [N, C, spatial...])            -> [N, ceil(C / block), spatial..., block]
//   ReorderFromNchwc(X [N, C / block, ..., block])  -> [N, channels, spatial...]
//   NchwcConv(X, W, B?, Z?)                          -> [N, ceil(M / block), OH, OW, block]
// NchwcConv takes Conv's attributes plus FusedConv's activation / activation_params (Silu and
// HardSwish included); X, Z and Y are blocked, W and B are as in Conv. With plain_input = 1 (and
// block = B) X is plain NCHW instead: a first layer with few channels (an RGB image) reads its
// 3 channels rather than a block of mostly zero lanes, and still writes NCHWc. `block` must be the
// channel block of the convolution kernels of this CPU (linalg::ConvBlockSize(): 16 with
// AVX-512, 8 otherwise), which the pass reads when it rewrites the graph. Channels past C in
// the last block are zero on the way in and unspecified on the way out. 1-D and 2-D, float.
#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "linalg/bf16_gemm.h"
#include "linalg/conv.h"
#include "platform/thread_pool.h"
#include "providers/cpu/kernels/linalg/packed_weights.h"
#include "providers/cpu/kernels/nn/conv_activation_attrs.h"
#include "providers/cpu/kernels/nn/conv_shape.h"
#include "providers/cpu/kernels/nn/window_geometry.h"
#include "providers/cpu/kernels/quantization/qdq_neighbours.h"
#include "providers/kernel.h"
#include "providers/kernel_variant.h"

namespace onyx {
namespace {

using linalg::ConvActivation;

int64_t Blocks(int64_t channels, int64_t block) { return (channels + block - 1) / block; }

void CheckBlock(const KernelInfo& info, int64_t block) {
  if (block != linalg::ConvBlockSize())
    info.Fail(StrCat("block ", block, " is not the channel block of this CPU's convolution kernels (",
                     linalg::ConvBlockSize(), ", ISA ", linalg::ConvIsa(), ")"));
}

class ReorderToNchwc final : public OpKernel {
 public:
  explicit ReorderToNchwc(const KernelInfo& info) : block_(info.GetInt("block")) { CheckBlock(info, block_); }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    if (x.dtype() != DataType::kFloat) ctx.Fail("X must be float");
    if (x.rank() < 3) ctx.Fail("X must have rank >= 3 (N, C, spatial...)");
    Shape shape = {x.dim(0), Blocks(x.dim(1), block_)};
    shape.insert(shape.end(), x.shape().begin() + 2, x.shape().end());
    shape.push_back(block_);
    Tensor& y = ctx.AllocateOutput(0, DataType::kFloat, shape);
    if (y.size() == 0) return;
    linalg::ReorderToNchwc(x.data<float>(), x.dim(0), x.dim(1), x.size() / std::max<int64_t>(1, x.dim(0) * x.dim(1)),
                           static_cast<int>(block_), y.data<float>(), ctx.thread_pool());
  }

 private:
  int64_t block_;
};

class ReorderFromNchwc final : public OpKernel {
 public:
  explicit ReorderFromNchwc(const KernelInfo& info) : channels_(info.GetInt("channels")) {
    if (channels_ < 0) info.Fail(StrCat("channels must be >= 0, got ", channels_));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    if (x.dtype() != DataType::kFloat) ctx.Fail("X must be float");
    if (x.rank() < 4) ctx.Fail("X must have rank >= 4 (N, C / block, spatial..., block)");
    const int64_t block = x.shape().back();
    if (block != linalg::ConvBlockSize())
      ctx.Fail(StrCat("the last dimension (", block, ") is not the convolution kernels' block ",
                      linalg::ConvBlockSize()));
    if (x.dim(1) != Blocks(channels_, block))
      ctx.Fail(StrCat("X has ", x.dim(1), " channel blocks, ", channels_, " channels need ", Blocks(channels_, block)));
    Shape shape = {x.dim(0), channels_};
    shape.insert(shape.end(), x.shape().begin() + 2, x.shape().end() - 1);
    Tensor& y = ctx.AllocateOutput(0, DataType::kFloat, shape);
    if (y.size() == 0) return;
    linalg::ReorderFromNchwc(x.data<float>(), x.dim(0), channels_, y.size() / (x.dim(0) * channels_),
                             static_cast<int>(block), y.data<float>(), ctx.thread_pool());
  }

 private:
  int64_t channels_;
};

ConvActivation ParseNchwcActivation(const KernelInfo& info) { return nn::ParseConvActivation(info, ""); }

class NchwcConv final : public OpKernel {
 public:
  explicit NchwcConv(const KernelInfo& info)
      : attrs_(nn::ParseWindowAttrs(info)),
        group_(info.GetIntOr("group", 1)),
        plain_input_(info.GetIntOr("plain_input", 0) != 0),
        activation_(ParseNchwcActivation(info)) {
    if (group_ < 1) info.Fail(StrCat("group must be >= 1, got ", group_));
    if (plain_input_) CheckBlock(info, info.GetInt("block"));
    const Tensor* w = info.ConstantInput(1);
    if (w == nullptr) info.Fail("W must be a constant (its blocked form is prepared once)");
    if (w->dtype() != DataType::kFloat) info.Fail("W must be float");
    if ((w->rank() != 3 && w->rank() != 4) || w->dim(0) % group_ != 0)
      info.Fail(StrCat("W must be [M, C / group, (kh,) kw] with M divisible by group, got ", ShapeToString(w->shape())));
    if (w->dim(0) == 0 || w->dim(1) == 0)
      info.Fail(StrCat("W ", ShapeToString(w->shape()), " has no output or input channels"));
    weight_shape_ = w->shape();
    linalg::Conv2dShape s;
    s.out_channels = w->dim(0);
    s.group = group_;
    s.in_channels = w->dim(1) * group_;
    s.kernel_w = w->shape().back();
    s.kernel_h = w->rank() == 4 ? w->dim(2) : 1;
    const size_t r = w->rank() - 2;
    auto at = [&](const std::vector<int64_t>& v, size_t d) { return v.size() == r ? v[d] : 1; };
    s.stride_w = at(attrs_.strides, r - 1);
    s.dilation_w = at(attrs_.dilations, r - 1);
    s.stride_h = r == 2 ? at(attrs_.strides, 0) : 1;
    s.dilation_h = r == 2 ? at(attrs_.dilations, 0) : 1;
    weight_conv_shape_ = s;
    const float* wp = w->data<float>();
    // A bfloat16 model's pointwise conv (linalg::kBf16Attribute) is the bf16 GEMM over the
    // blocked image: W [M, C] is B transposed, packed once in bfloat16 pairs.
    if (Bf16Pointwise(info, s)) {
      bf16_w_ = std::make_shared<const linalg::PackedBf16B>(true, s.in_channels, s.out_channels, wp, s.in_channels);
      isa_ = linalg::Bf16GemmKernelName();
      reads_w_at_run_ = false;
      return;
    }
    // linalg's rule (onyx explain calls it too); Winograd's rounding would flip quantized values.
    const bool exact = !plain_input_ && linalg::WinogradConv::Applicable(s) && IsBetweenQuantizeNodes(info);
    linalg::ConvAlgorithm algorithm = linalg::ChooseNchwcAlgorithm(s, plain_input_, exact).algorithm;
    // A Winograd layer whose output map is known to be small runs direct on every Run: its
    // Winograd weights (four times W's size) would only take memory and creation time.
    if (algorithm == linalg::ConvAlgorithm::kWinograd && StaticSmallPlane(info, s))
      algorithm = linalg::ConvAlgorithm::kDirect;
    const linalg::PackSource source = linalg_kernels::PackSourceFor(info, 1);  // the creation cache's
    switch (algorithm) {
      case linalg::ConvAlgorithm::kDepthwise: depthwise_ = linalg::DepthwiseConv(s, wp, &source); break;
      case linalg::ConvAlgorithm::kWinograd:
        winograd_ = linalg::WinogradConv(s, wp, info.thread_pool(), &source);
        break;
      default: direct_ = linalg::DirectConv(s, wp, &source); break;  // plain_input: reads NCHW, writes NCHWc
    }
    isa_ = linalg::ConvIsaName();
    // W is read again only by a Winograd layer that may meet a small output map at run time.
    reads_w_at_run_ = !winograd_.empty() && MaySeeSmallPlane(info, s);
  }

  bool ReadsConstantInputAtRun(size_t input) const override { return input != 1 || reads_w_at_run_; }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor* b = ctx.input(2);
    const Tensor* z = ctx.input(3);
    const int64_t block = linalg::ConvBlockSize();
    const size_t r = weight_shape_.size() - 2;
    if (x.dtype() != DataType::kFloat || (b != nullptr && b->dtype() != DataType::kFloat) ||
        (z != nullptr && z->dtype() != DataType::kFloat))
      ctx.Fail("X, B and Z must be float");
    const int64_t channels = weight_shape_[1] * group_, out_channels = weight_shape_[0];
    if (plain_input_) {
      if (x.rank() != r + 2 || x.dim(1) != channels)
        ctx.Fail(StrCat("X must be [N, ", channels, ", spatial (", r, " dims)] (plain_input)"));
    } else {
      if (x.rank() != r + 3 || x.shape().back() != block)
        ctx.Fail(StrCat("X must be [N, C / ", block, ", spatial (", r, " dims), ", block, "]"));
      if (x.dim(1) != Blocks(channels, block))
        ctx.Fail(StrCat("X has ", x.dim(1), " channel blocks, W's ", channels, " input channels need ",
                        Blocks(channels, block)));
    }
    if (b != nullptr && (b->rank() != 1 || b->dim(0) != out_channels))
      ctx.Fail(StrCat("B must have shape [", out_channels, "]"));
    // The window over the plain (unblocked) shape.
    Shape plain = {x.dim(0), channels};
    plain.insert(plain.end(), x.shape().begin() + 2, x.shape().end() - (plain_input_ ? 0 : 1));
    const std::vector<int64_t> kernel(weight_shape_.begin() + 2, weight_shape_.end());
    if (!attrs_.kernel_shape.empty() && attrs_.kernel_shape != kernel)
      ctx.Fail(StrCat("kernel_shape [", StrJoin(attrs_.kernel_shape), "] differs from W's spatial dims"));
    const nn::WindowGeometry g = nn::ResolveForwardWindow(attrs_, plain, kernel, ctx);
    const linalg::Conv2dShape s = nn::ToConv2dShape(g, x.dim(0), channels, out_channels, group_);
    Shape y_shape = {s.batch, Blocks(out_channels, block)};
    y_shape.insert(y_shape.end(), g.out.begin(), g.out.end());
    y_shape.push_back(block);
    if (z != nullptr && z->shape() != y_shape)
      ctx.Fail(StrCat("Z must have the output's blocked shape ", ShapeToString(y_shape)));
    Tensor& y = ctx.AllocateOutput(0, DataType::kFloat, y_shape);
    if (y.size() == 0) return;
    if (bf16_w_) return RunBf16(ctx, s, x, b, z, y);
    linalg::ConvRunArgs args;
    args.bias = b != nullptr ? b->data<float>() : nullptr;
    args.residual = z != nullptr ? z->data<float>() : nullptr;
    args.activation = activation_;
    args.x_layout = plain_input_ ? linalg::ConvLayout::kNchw : linalg::ConvLayout::kNchwc;
    args.y_layout = linalg::ConvLayout::kNchwc;
    auto run = [&](const auto& engine) {
      if (engine.block() != block) ctx.Fail("the kernels' ISA changed since the node was prepared");
      if (!engine.Supports(s, args))
        ctx.Fail(StrCat("this convolution has no NCHWc form (grouped channels must be multiples of ", block, ")"));
      engine.Run(s, x.data<float>(), y.data<float>(), args, ctx.thread_pool());
    };
    // The profile's kernel arg: static text, two stores.
    if (!depthwise_.empty()) {
      NoteKernelVariant(linalg::ConvAlgorithmName(linalg::ConvAlgorithm::kDepthwise, s), isa_);
      run(depthwise_);
    } else if (!winograd_.empty() && linalg::NchwcRunsDirectForSmallPlane(s)) {
      NoteKernelVariant("direct NCHWc (small output map)", isa_);
      run(SmallPlaneDirect(ctx));
    } else if (!winograd_.empty()) {
      NoteKernelVariant(linalg::ConvAlgorithmName(linalg::ConvAlgorithm::kWinograd, s), isa_);
      run(winograd_);
    } else {
      NoteKernelVariant(linalg::ConvAlgorithmName(linalg::ConvAlgorithm::kDirect, s), isa_);
      run(direct_);
    }
  }

 private:
  // Marked by HalfBodyToFloat, AVX-512 BF16 here, and a 1x1 window (any stride) with no
  // padding, one group, whole 16-channel blocks and an activation the GEMM's epilogue has.
  bool Bf16Pointwise(const KernelInfo& info, const linalg::Conv2dShape& s) const {
    if (info.GetIntOr(linalg::kBf16Attribute, 0) != 1 || !linalg::Bf16GemmAvailable()) return false;
    if (plain_input_ || linalg::ConvBlockSize() != 16 || s.group != 1 || s.kernel_h != 1 || s.kernel_w != 1 ||
        s.dilation_h != 1 || s.dilation_w != 1 || s.in_channels % 16 != 0 || s.out_channels % 16 != 0)
      return false;
    if (attrs_.auto_pad != nn::AutoPad::kNotSet && attrs_.auto_pad != nn::AutoPad::kValid) return false;
    for (int64_t p : attrs_.pads)
      if (p != 0) return false;
    // With few channels, converting the map to bfloat16 pairs costs more than the faster product
    // saves: YOLO's 32->32 and 64->64 layers ran 1.0-1.8x slower in bfloat16, 128->128 and up faster.
    if (s.in_channels * s.out_channels < kBf16MinChannelProduct) return false;
    return Bf16Activation(activation_.kind) >= 0;
  }
  static constexpr int64_t kBf16MinChannelProduct = 128 * 128;

  static int Bf16Activation(ConvActivation::Kind kind) {
    switch (kind) {
      case ConvActivation::kNone: return linalg::GemmEpilogue::kNone;
      case ConvActivation::kRelu: return linalg::GemmEpilogue::kRelu;
      case ConvActivation::kClip: return linalg::GemmEpilogue::kClip;
      case ConvActivation::kLeakyRelu: return linalg::GemmEpilogue::kLeakyRelu;
      case ConvActivation::kHardSigmoid: return linalg::GemmEpilogue::kHardSigmoid;
      case ConvActivation::kSigmoid: return linalg::GemmEpilogue::kSigmoid;
      case ConvActivation::kTanh: return linalg::GemmEpilogue::kTanh;
      case ConvActivation::kSilu: return linalg::GemmEpilogue::kSilu;
      default: return -1;
    }
  }

  // Per image: rows are the plane's pixels, K the input channels, N the output channels; the
  // 16-channel blocks are a plane apart in X, Y and Z. A strided layer first copies the pixels
  // it reads into a plane of the output's size (a 16th of the product's work at most).
  void RunBf16(KernelContext& ctx, const linalg::Conv2dShape& s, const Tensor& x, const Tensor* b, const Tensor* z,
               Tensor& y) const {
    if (s.pad_top != 0 || s.pad_left != 0 || s.pad_bottom != 0 || s.pad_right != 0)
      ctx.Fail("the bfloat16 pointwise path needs no padding");
    const bool strided = s.stride_h != 1 || s.stride_w != 1;
    NoteKernelVariant(strided ? "bf16 gemm pointwise NCHWc (strided)" : "bf16 gemm pointwise NCHWc", isa_);
    const int64_t plane = s.out_h * s.out_w, block = 16;
    std::vector<float> picked;
    if (strided) {
      const int64_t blocks = s.batch * s.in_channels / block;
      picked.resize(static_cast<size_t>(blocks * plane * block));
      const float* xd = x.data<float>();
      ThreadPool::For(ctx.thread_pool(), blocks, static_cast<double>(plane * block), [&](int64_t begin, int64_t end) {
        for (int64_t cb = begin; cb < end; ++cb)
          for (int64_t oy = 0; oy < s.out_h; ++oy)
            for (int64_t ox = 0; ox < s.out_w; ++ox)
              std::copy_n(xd + ((cb * s.in_h + oy * s.stride_h) * s.in_w + ox * s.stride_w) * block, block,
                          picked.data() + ((cb * s.out_h + oy) * s.out_w + ox) * block);
      });
    }
    const float* xp = strided ? picked.data() : x.data<float>();
    linalg::GemmEpilogue ep;
    ep.bias_per_col = b != nullptr ? b->data<float>() : nullptr;
    ep.activation = static_cast<linalg::GemmEpilogue::Activation>(Bf16Activation(activation_.kind));
    ep.alpha = activation_.alpha;
    ep.beta = activation_.beta;
    ep.ldr = block;
    const int64_t x_image = s.in_channels * plane, y_image = s.out_channels * plane;  // X: after picking
    for (int64_t n = 0; n < s.batch; ++n) {
      ep.residual = z != nullptr ? z->data<float>() + n * y_image : nullptr;
      linalg::Bf16GemmPackedBBlocked(plane, s.out_channels, s.in_channels, 1.0f, xp + n * x_image, block,
                                     plane * block, *bf16_w_, 0.0f, y.data<float>() + n * y_image, block,
                                     plane * block, ctx.thread_pool(), &ep);
    }
  }

  // The output map's pixels when the blocked output's spatial dims are known statically, else -1.
  static int64_t StaticOutputPlane(const KernelInfo& info) {
    const std::shared_ptr<const TypeInfo> t = info.OutputType(0);
    if (t == nullptr || !t->shape || t->shape->size() < 4) return -1;
    int64_t plane = 1;
    for (size_t i = 2; i + 1 < t->shape->size(); ++i) {
      if (!(*t->shape)[i].known()) return -1;
      plane *= (*t->shape)[i].value;
    }
    return plane;
  }
  static bool StaticSmallPlane(const KernelInfo& info, linalg::Conv2dShape s) {
    s.out_h = StaticOutputPlane(info);
    s.out_w = 1;
    return s.out_h >= 0 && linalg::NchwcRunsDirectForSmallPlane(s);
  }
  // Whether a Run can take the small-plane direct path: the weights are many and the map's size
  // is unknown (a known large map never does).
  static bool MaySeeSmallPlane(const KernelInfo& info, linalg::Conv2dShape s) {
    s.out_h = 1;
    s.out_w = 1;
    return linalg::NchwcRunsDirectForSmallPlane(s) && StaticOutputPlane(info) < 0;
  }

  // The direct engine for small output maps of a Winograd convolution, prepared on the first
  // such run from W (which stays bound then: see reads_w_at_run_).
  const linalg::DirectConv& SmallPlaneDirect(KernelContext& ctx) const {
    std::call_once(small_direct_once_, [&] {
      const Tensor* w = ctx.input(1);
      if (w == nullptr || w->dtype() != DataType::kFloat || w->shape() != weight_shape_) ctx.Fail("W must stay constant");
      small_direct_ = linalg::DirectConv(weight_conv_shape_, w->data<float>());
    });
    return small_direct_;
  }

  nn::WindowAttrs attrs_;
  int64_t group_;
  bool plain_input_;
  ConvActivation activation_;
  Shape weight_shape_;
  linalg::DirectConv direct_;
  linalg::DepthwiseConv depthwise_;
  linalg::WinogradConv winograd_;
  linalg::Conv2dShape weight_conv_shape_;
  std::shared_ptr<const linalg::PackedBf16B> bf16_w_;  // a bfloat16 model's pointwise W (no engine then)
  const char* isa_ = "";  // the engines' ISA (static text)
  bool reads_w_at_run_ = true;
  mutable std::once_flag small_direct_once_;
  mutable linalg::DirectConv small_direct_;
};

ONYX_REGISTER_KERNEL("CPU", "com.onyx", "ReorderToNchwc", 1, kOpsetMax, ReorderToNchwc);
ONYX_REGISTER_KERNEL("CPU", "com.onyx", "ReorderFromNchwc", 1, kOpsetMax, ReorderFromNchwc);
ONYX_REGISTER_KERNEL("CPU", "com.onyx", "NchwcConv", 1, kOpsetMax, NchwcConv);

}  // namespace
}  // namespace onyx
