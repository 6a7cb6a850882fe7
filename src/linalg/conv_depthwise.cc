// DepthwiseConv: NCHW images with long unit-stride rows take one task per output channel plane,
// vectorized over the width; the others (short rows, strides) are transposed a channel block at
// a time into NCHWc scratch, run through the channel-vectorized kernel and transposed back with
// the residual and activation. NCHWc tensors run that kernel directly, per block and row range.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "linalg/conv.h"
#include "linalg/conv_scratch.h"
#include "linalg/f32_conv_kernel.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {
namespace {

// Output rows at least this wide (scaled to the vector width, measured with AVX-512's 16) take
// the row kernel.
constexpr int64_t kRowPathMinWidth = 12;
constexpr int64_t kRowPathMinWidthStride2 = 48;

// The blocked kernel's arguments that come from the conv's shape alone (the window and the
// image sizes); callers add the pointers, the rows and the activation.
DepthwiseBlockedArgs BlockedGeometry(const Conv2dShape& s) {
  DepthwiseBlockedArgs a;
  a.in_h = s.in_h;
  a.in_w = s.in_w;
  a.out_h = s.out_h;
  a.out_w = s.out_w;
  a.kernel_h = s.kernel_h;
  a.kernel_w = s.kernel_w;
  a.stride_h = s.stride_h;
  a.stride_w = s.stride_w;
  a.dilation_h = s.dilation_h;
  a.dilation_w = s.dilation_w;
  a.pad_top = s.pad_top;
  a.pad_left = s.pad_left;
  return a;
}

}  // namespace

DepthwiseConv::DepthwiseConv(const Conv2dShape& s, const float* w, const PackSource* source)
    : kernels_(&SelectedConvKernels()),
      channels_(s.in_channels),
      out_channels_(s.out_channels),
      kernel_h_(s.kernel_h),
      kernel_w_(s.kernel_w) {
  const int64_t taps = kernel_h_ * kernel_w_;
  weights_.assign(w, w + out_channels_ * taps);
  if (out_channels_ == channels_) {
    const int64_t b = kernels_->block, blocks = (channels_ + b - 1) / b;
    const size_t count = static_cast<size_t>(blocks * taps * b);
    blocked_ = MakePack(source, name() + ":b" + std::to_string(b), count, [&](float* out) {
      std::fill_n(out, count, 0.0f);
      for (int64_t c = 0; c < channels_; ++c)
        for (int64_t t = 0; t < taps; ++t) out[((c / b) * taps + t) * b + c % b] = w[c * taps + t];
    });
  }
}

int DepthwiseConv::block() const { return kernels_->block; }

std::string DepthwiseConv::name() const { return std::string("f32_dwconv_") + kernels_->isa; }

bool DepthwiseConv::Supports(const Conv2dShape& s, const ConvRunArgs& args) const {
  if (empty() || !s.IsDepthwise() || s.in_channels != channels_ || s.out_channels != out_channels_ ||
      s.kernel_h != kernel_h_ || s.kernel_w != kernel_w_)
    return false;
  const bool blocked = args.x_layout == ConvLayout::kNchwc || args.y_layout == ConvLayout::kNchwc;
  return !blocked || (args.x_layout == args.y_layout && out_channels_ == channels_);
}

void DepthwiseConv::Run(const Conv2dShape& s, const float* x, float* y, const ConvRunArgs& args,
                        ThreadPool* pool) const {
  const ConvKernelTable& k = *kernels_;
  const int64_t taps = kernel_h_ * kernel_w_;
  const int64_t in_plane = s.in_h * s.in_w, out_plane = s.out_h * s.out_w;
  if (out_plane == 0 || s.batch == 0) return;

  if (args.x_layout == ConvLayout::kNchwc) {
    const int64_t b = k.block, blocks = (channels_ + b - 1) / b;
    std::vector<float> bias;
    if (args.bias != nullptr) {
      bias.assign(static_cast<size_t>(blocks * b), 0.0f);
      std::copy(args.bias, args.bias + channels_, bias.begin());
    }
    // Rows per task: enough work to repay a task, several tasks per block for big images, and
    // more when that gives every thread as many tasks (9 blocks on 2 threads: 18 half blocks).
    // Task r takes rows [r * out_h / row_chunks, (r + 1) * out_h / row_chunks).
    const int64_t rows = std::max<int64_t>(1, std::min<int64_t>(s.out_h, 4096 / std::max<int64_t>(1, s.out_w)));
    int64_t row_chunks = (s.out_h + rows - 1) / rows;
    const int64_t threads = pool != nullptr ? pool->num_threads() : 1;
    const int64_t planes = s.batch * blocks;
    for (int64_t rc = row_chunks; threads > 1 && rc <= std::min<int64_t>(s.out_h, 4 * row_chunks); ++rc)
      if (planes * rc % threads == 0 && planes * rc >= 2 * threads) {
        row_chunks = rc;
        break;
      }
    const double cost = 2.0 * static_cast<double>((s.out_h + row_chunks - 1) / row_chunks * s.out_w * taps * b) + 1.0;
    ThreadPool::For(pool, planes * row_chunks, cost, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int64_t rc = i % row_chunks, nb = i / row_chunks, cb = nb % blocks;
        DepthwiseBlockedArgs a = BlockedGeometry(s);
        a.x = x + nb * in_plane * b;
        a.w = blocked_.data() + cb * taps * b;
        a.bias = bias.empty() ? nullptr : bias.data() + cb * b;
        a.residual = args.residual != nullptr ? args.residual + nb * out_plane * b : nullptr;
        a.y = y + nb * out_plane * b;
        a.oh_begin = rc * s.out_h / row_chunks;
        a.oh_end = (rc + 1) * s.out_h / row_chunks;
        a.act = &args.activation;
        k.depthwise_blocked(a);
      }
    });
    return;
  }

  const int64_t multiplier = out_channels_ / channels_;
  if (multiplier == 1 && !PreferRows(s, k.block)) {
    RunTransposed(s, x, y, args, pool);
    return;
  }
  DepthwisePlaneArgs proto;
  proto.in_h = s.in_h;
  proto.in_w = s.in_w;
  proto.out_h = s.out_h;
  proto.out_w = s.out_w;
  proto.kernel_h = s.kernel_h;
  proto.kernel_w = s.kernel_w;
  proto.stride_h = s.stride_h;
  proto.stride_w = s.stride_w;
  proto.dilation_h = s.dilation_h;
  proto.dilation_w = s.dilation_w;
  proto.pad_top = s.pad_top;
  proto.pad_left = s.pad_left;
  proto.act = &args.activation;
  const int64_t scratch = GetDepthwisePlaneLayout(proto, k.block).Floats(s.stride_w);
  const double cost = 2.0 * static_cast<double>(out_plane * taps) + static_cast<double>(in_plane);
  ThreadPool::For(pool, s.batch * out_channels_, cost, [&](int64_t begin, int64_t end) {
    const ConvScratch buffer(ScratchSlot::kTaskA, static_cast<size_t>(scratch));
    for (int64_t i = begin; i < end; ++i) {
      const int64_t n = i / out_channels_, m = i % out_channels_;
      DepthwisePlaneArgs a = proto;
      a.x = x + (n * channels_ + m / multiplier) * in_plane;
      a.w = weights_.data() + m * taps;
      a.bias = args.bias != nullptr ? args.bias[m] : 0.0f;
      a.residual = args.residual != nullptr ? args.residual + i * out_plane : nullptr;
      a.y = y + i * out_plane;
      a.scratch = buffer.get();
      k.depthwise_plane(a);
    }
  });
}

void DepthwiseConv::RunBlockedRows(const Conv2dShape& s, const float* x, int64_t oh0, int64_t oh1, float* band,
                                   int64_t band_block_stride, const float* padded_bias,
                                   const ConvActivation& act, int64_t x_block_stride) const {
  const ConvKernelTable& k = *kernels_;
  const int64_t b = k.block, blocks = (channels_ + b - 1) / b, taps = kernel_h_ * kernel_w_;
  DepthwiseBlockedArgs a = BlockedGeometry(s);
  a.oh_begin = oh0;
  a.oh_end = oh1;
  a.y_row0 = oh0;
  a.act = &act;
  const int64_t x_stride = x_block_stride != 0 ? x_block_stride : s.in_h * s.in_w * b;
  for (int64_t cb = 0; cb < blocks; ++cb) {
    a.x = x + cb * x_stride;
    a.w = blocked_.data() + cb * taps * b;
    a.bias = padded_bias != nullptr ? padded_bias + cb * b : nullptr;
    a.y = band + cb * band_block_stride;
    k.depthwise_blocked(a);
  }
}

bool DepthwiseConv::PreferRows(const Conv2dShape& s, int64_t block) {
  // Rows vectorize well when they are long enough (stride 2 loads twice the width); otherwise
  // the NCHWc kernel on a transposed copy keeps every lane busy.
  if (s.stride_w == 1) return s.out_w >= kRowPathMinWidth * block / 16;
  return s.stride_w == 2 && s.out_w >= kRowPathMinWidthStride2 * block / 16;
}

void DepthwiseConv::RunTransposed(const Conv2dShape& s, const float* x, float* y, const ConvRunArgs& args,
                                  ThreadPool* pool) const {
  const ConvKernelTable& k = *kernels_;
  const int64_t b = k.block, blocks = (channels_ + b - 1) / b, taps = kernel_h_ * kernel_w_;
  const int64_t in_plane = s.in_h * s.in_w, out_plane = s.out_h * s.out_w;
  std::vector<float> bias;
  if (args.bias != nullptr) {
    bias.assign(static_cast<size_t>(blocks * b), 0.0f);
    std::copy(args.bias, args.bias + channels_, bias.begin());
  }
  const double cost = 2.0 * static_cast<double>(out_plane * taps * b) + 4.0 * static_cast<double>(in_plane * b);
  ThreadPool::For(pool, s.batch * blocks, cost, [&](int64_t begin, int64_t end) {
    const ConvScratch in_buf(ScratchSlot::kTaskA, static_cast<size_t>(in_plane * b));
    const ConvScratch out_buf(ScratchSlot::kTaskB, static_cast<size_t>(out_plane * b));
    for (int64_t i = begin; i < end; ++i) {
      const int64_t n = i / blocks, cb = i % blocks, c0 = cb * b;
      const int64_t channels = std::min<int64_t>(b, channels_ - c0);
      k.block_rows(x + (n * channels_ + c0) * in_plane, in_plane, channels, in_plane, in_buf.get());
      DepthwiseBlockedArgs a = BlockedGeometry(s);
      a.x = in_buf.get();
      a.w = blocked_.data() + cb * taps * b;
      a.bias = bias.empty() ? nullptr : bias.data() + c0;
      a.y = out_buf.get();
      a.oh_begin = 0;
      a.oh_end = s.out_h;
      k.depthwise_blocked(a);
      const int64_t off = (n * channels_ + c0) * out_plane;
      k.unblock(out_buf.get(), out_plane, channels, y + off, out_plane,
                args.residual != nullptr ? args.residual + off : nullptr, out_plane, &args.activation);
    }
  });
}

}  // namespace onyx::linalg
