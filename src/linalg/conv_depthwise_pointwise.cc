// DepthwisePointwiseConv: tasks are bands of output rows of one image (the pointwise keeps the
// depthwise's rows). A band is as many rows as keep its depthwise output within kBandBytes, so
// it is still in L2 when the pointwise reads it (once per chunk of output blocks). Measured on
// MobileNetV2's shapes (1 thread, alternating with the two engines): 32 KB bands 0.83-1.04x the
// two engines' time, 64 KB 0.80-0.99x, 128 KB 0.78-0.97x, 256 KB 0.77-0.95x.
#include "linalg/conv_depthwise_pointwise.h"

#include <algorithm>
#include <vector>

#include "linalg/conv_scratch.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {
namespace {

constexpr int64_t kBandBytes = 128 << 10;

// A 1x1, stride 1, unpadded window (dilation is moot with one tap).
bool OneByOne(const Conv2dShape& s) {
  return s.kernel_h == 1 && s.kernel_w == 1 && s.stride_h == 1 && s.stride_w == 1 && s.pad_top == 0 &&
         s.pad_left == 0 && s.pad_bottom == 0 && s.pad_right == 0;
}

}  // namespace

std::vector<float> PaddedBlockBias(const float* bias, int64_t channels, int64_t block) {
  std::vector<float> padded;
  if (bias != nullptr) {
    padded.assign(static_cast<size_t>((channels + block - 1) / block * block), 0.0f);
    std::copy(bias, bias + channels, padded.begin());
  }
  return padded;
}

DepthwisePointwiseConv::DepthwisePointwiseConv(const Conv2dShape& dw, const float* dw_w, const Conv2dShape& pw,
                                               const float* pw_w, const PackSource* dw_source,
                                               const PackSource* pw_source)
    : depthwise_(dw, dw_w, dw_source),
      pointwise_(pw, pw_w, pw_source),
      channels_(dw.in_channels),
      out_channels_(pw.out_channels) {}

bool DepthwisePointwiseConv::Applicable(const Conv2dShape& dw, const Conv2dShape& pw) {
  return dw.IsDepthwise() && dw.out_channels == dw.in_channels && pw.group == 1 &&
         pw.in_channels == dw.out_channels && OneByOne(pw) && pw.dilation_h == 1 && pw.dilation_w == 1;
}

bool DepthwisePointwiseConv::ExpandApplicable(const Conv2dShape& expand, const Conv2dShape& dw) {
  return expand.group == 1 && expand.in_channels > 0 && expand.out_channels == dw.in_channels && OneByOne(expand) &&
         expand.dilation_h == 1 && expand.dilation_w == 1;
}

void DepthwisePointwiseConv::WithExpand(const Conv2dShape& expand, const float* w, const PackSource* source) {
  expand_ = DirectConv(expand, w, source);
  in_channels_ = expand.in_channels;
}

std::string DepthwisePointwiseConv::name() const {
  return (has_expand() ? expand_.name() + "+" : std::string()) + depthwise_.name() + "+" + pointwise_.name();
}

bool DepthwisePointwiseConv::Supports(const Conv2dShape& dw) const {
  ConvRunArgs blocked;
  blocked.x_layout = blocked.y_layout = ConvLayout::kNchwc;
  return !empty() && pointwise_.IsPointwise() && (!has_expand() || expand_.IsPointwise()) &&
         depthwise_.Supports(dw, blocked) && dw.in_channels == channels_;
}

DepthwisePointwiseConv::Bands DepthwisePointwiseConv::SplitIntoBands(const Conv2dShape& dw, int64_t threads) const {
  // Rows within kBandBytes, then more when that gives every thread as many tasks (and at least
  // two each). Band i takes rows [i * out_h / count, (i + 1) * out_h / count).
  const int64_t b = block(), blocks = (channels_ + b - 1) / b;
  const int64_t row_bytes = blocks * b * dw.out_w * static_cast<int64_t>(sizeof(float));
  const int64_t rows = std::clamp<int64_t>(kBandBytes / row_bytes, 1, dw.out_h);
  Bands bands;
  bands.count = (dw.out_h + rows - 1) / rows;
  for (int64_t n = bands.count; threads > 1 && n <= std::min(dw.out_h, 2 * bands.count + 2); ++n)
    if (dw.batch * n % threads == 0 && dw.batch * n >= 2 * threads) {
      bands.count = n;
      break;
    }
  bands.max_rows = (dw.out_h + bands.count - 1) / bands.count;
  return bands;
}

void DepthwisePointwiseConv::Run(const Conv2dShape& dw, const float* x, float* y, const DepthwisePointwiseArgs& args,
                                 ThreadPool* pool) const {
  if (dw.out_h * dw.out_w == 0 || dw.batch == 0) return;
  if (has_expand()) return RunExpanded(dw, x, y, args, pool);
  const int64_t b = block();
  const int64_t blocks = (channels_ + b - 1) / b, out_blocks = (out_channels_ + b - 1) / b;
  const int64_t out_plane = dw.out_h * dw.out_w;
  const int64_t x_image = blocks * dw.in_h * dw.in_w * b, y_image = out_blocks * out_plane * b;
  const std::vector<float> dw_bias = PaddedBlockBias(args.dw_bias, channels_, b);
  const std::vector<float> bias = PaddedBlockBias(args.bias, out_channels_, b);
  const Bands bands = SplitIntoBands(dw, pool != nullptr ? pool->num_threads() : 1);
  const int64_t max_rows = bands.max_rows;
  const double cost = 2.0 * static_cast<double>(max_rows * dw.out_w * blocks * b) *
                          static_cast<double>(dw.kernel_h * dw.kernel_w + out_blocks * b) +
                      1.0;
  ThreadPool::For(pool, dw.batch * bands.count, cost, [&](int64_t begin, int64_t end) {
    const ConvScratch band(ScratchSlot::kTaskA, static_cast<size_t>(blocks * b * max_rows * dw.out_w));
    for (int64_t item = begin; item < end; ++item) {
      const int64_t n = item / bands.count, i = item % bands.count;
      const int64_t oh0 = i * dw.out_h / bands.count, oh1 = (i + 1) * dw.out_h / bands.count;
      if (oh0 == oh1) continue;
      const int64_t band_stride = (oh1 - oh0) * dw.out_w * b;
      depthwise_.RunBlockedRows(dw, x + n * x_image, oh0, oh1, band.get(), band_stride,
                                dw_bias.empty() ? nullptr : dw_bias.data(), args.dw_activation);
      const int64_t y_off = n * y_image + oh0 * dw.out_w * b;
      pointwise_.RunPointwiseSpan(band.get(), band_stride, (oh1 - oh0) * dw.out_w, y + y_off, out_plane * b,
                                  args.residual != nullptr ? args.residual + y_off : nullptr,
                                  bias.empty() ? nullptr : bias.data(), args.activation);
    }
  });
}

}  // namespace onyx::linalg
