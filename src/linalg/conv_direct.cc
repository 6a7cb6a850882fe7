// DirectConv: weights packed once into output-channel blocks of the ISA's vector width; each
// task computes one output row (or, for pointwise convolutions, a run of the flattened image)
// of a few output blocks. Interior pixels take every kernel tap in register tiles of
// max_pixels; pixels whose window crosses the left/right padding take only their valid taps.
// NCHW output goes through a small blocked strip that is transposed into the output rows with
// the residual and activation applied while it is in L1.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "linalg/conv.h"
#include "linalg/f32_conv_kernel.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {
namespace {

// Weights of one input-channel chunk of a task: small enough to stay in L1 while the chunk
// sweeps a segment of output pixels.
constexpr int64_t kChunkWeightBytes = 16 << 10;
// NCHW inputs with at least this many pixels per channel are reordered to NCHWc first.
constexpr int64_t kBlockInputMinPixels = 256;

int64_t CeilDivPos(int64_t a, int64_t b) { return a <= 0 ? 0 : (a + b - 1) / b; }

}  // namespace

DirectConv::DirectConv(const Conv2dShape& s, const float* w)
    : kernels_(&SelectedConvKernels()),
      out_channels_(s.out_channels),
      group_(s.group),
      in_per_group_(s.in_channels / s.group),
      kernel_h_(s.kernel_h),
      kernel_w_(s.kernel_w) {
  const int64_t b = kernels_->block;
  const int64_t mg = out_channels_ / group_, cg = in_per_group_, taps = kernel_h_ * kernel_w_;
  out_blocks_per_group_ = (mg + b - 1) / b;
  in_blocks_per_group_ = (cg + b - 1) / b;
  packed_.assign(static_cast<size_t>(group_ * out_blocks_per_group_ * in_blocks_per_group_ * taps * b * b), 0.0f);
  float* dst = packed_.data();
  for (int64_t g = 0; g < group_; ++g)
    for (int64_t ob = 0; ob < out_blocks_per_group_; ++ob)
      for (int64_t cb = 0; cb < in_blocks_per_group_; ++cb)
        for (int64_t t = 0; t < taps; ++t)
          for (int64_t c = 0; c < b; ++c)
            for (int64_t o = 0; o < b; ++o, ++dst) {
              const int64_t m = ob * b + o, ci = cb * b + c;
              if (m < mg && ci < cg) *dst = w[((g * mg + m) * cg + ci) * taps + t];
            }
}

int DirectConv::block() const { return kernels_->block; }

std::string DirectConv::name() const { return std::string("f32_conv_nchwc_") + kernels_->isa; }

bool DirectConv::Supports(const Conv2dShape& s, const ConvRunArgs& args) const {
  if (empty() || s.group != group_ || s.out_channels != out_channels_ || s.in_channels != group_ * in_per_group_ ||
      s.kernel_h != kernel_h_ || s.kernel_w != kernel_w_)
    return false;
  const int64_t b = kernels_->block;
  if (args.x_layout == ConvLayout::kNchwc && group_ > 1 && in_per_group_ % b != 0) return false;
  if (args.y_layout == ConvLayout::kNchwc && group_ > 1 && (out_channels_ / group_) % b != 0) return false;
  return true;
}

void DirectConv::Run(const Conv2dShape& s, const float* x, float* y, const ConvRunArgs& args, ThreadPool* pool) const {
  const ConvKernelTable& k = *kernels_;
  const int64_t b = k.block;
  const int64_t mg = out_channels_ / group_, cg = in_per_group_;
  const int64_t taps_total = kernel_h_ * kernel_w_;
  bool x_blocked = args.x_layout == ConvLayout::kNchwc;
  const bool y_blocked = args.y_layout == ConvLayout::kNchwc;
  const int64_t in_plane = s.in_h * s.in_w, out_plane = s.out_h * s.out_w;
  if (out_plane == 0 || s.batch == 0) return;

  // A big NCHW image is blocked once: the tiles then broadcast from a few contiguous streams
  // instead of one plane per input channel (which also alias in L1 for power-of-two planes).
  std::vector<float> blocked_input;
  if (!x_blocked && in_plane >= kBlockInputMinPixels && cg >= b / 2 && (group_ == 1 || cg % b == 0)) {
    blocked_input.resize(static_cast<size_t>(s.batch * ((s.in_channels + b - 1) / b) * b * in_plane));
    ReorderToNchwc(x, s.batch, s.in_channels, in_plane, static_cast<int>(b), blocked_input.data(), pool);
    x = blocked_input.data();
    x_blocked = true;
  }

  // A pointwise convolution is one row of out_plane pixels.
  const bool flat = s.IsPointwise();
  const int64_t ih_n = flat ? 1 : s.in_h, iw_n = flat ? in_plane : s.in_w;
  const int64_t oh_n = flat ? 1 : s.out_h, ow_n = flat ? out_plane : s.out_w;

  // Input addressing (element index relative to the image and group start).
  const int64_t x_col = x_blocked ? b : 1, x_row = iw_n * x_col;
  const int64_t x_channel = x_blocked ? 1 : in_plane, x_block = x_blocked ? in_plane * b : b * in_plane;
  const int64_t x_image = x_blocked ? (group_ * cg + b - 1) / b * in_plane * b : s.in_channels * in_plane;
  const int64_t x_group = x_blocked ? cg / b * in_plane * b : cg * in_plane;  // group > 1: cg % b == 0
  const int64_t out_blocks_total = (out_channels_ + b - 1) / b;
  const int64_t y_image = y_blocked ? out_blocks_total * out_plane * b : out_channels_ * out_plane;

  // Bias padded to whole blocks per group.
  std::vector<float> bias;
  if (args.bias != nullptr) {
    bias.assign(static_cast<size_t>(group_ * out_blocks_per_group_ * b), 0.0f);
    for (int64_t g = 0; g < group_; ++g)
      for (int64_t m = 0; m < mg; ++m) bias[g * out_blocks_per_group_ * b + m] = args.bias[g * mg + m];
  }

  // Output blocks per task, spread evenly (5 blocks with max 4 -> 3 + 2).
  const int64_t chunks = (out_blocks_per_group_ + k.max_filter_blocks - 1) / k.max_filter_blocks;
  const int64_t per_chunk = (out_blocks_per_group_ + chunks - 1) / chunks;
  const int64_t items = s.batch * group_ * chunks * oh_n;
  const double cost = 2.0 * static_cast<double>(per_chunk * b * ow_n * cg * taps_total) + 1.0;
  const int64_t w_fb_stride = in_blocks_per_group_ * taps_total * b * b;
  const int64_t segment = 16 * k.max_pixels;  // output pixels per staged segment
  const int64_t chunk_blocks = std::clamp<int64_t>(
      kChunkWeightBytes / (per_chunk * taps_total * b * b * static_cast<int64_t>(sizeof(float))), 1,
      in_blocks_per_group_);

  // Interior output columns: every kernel column inside the input.
  const int64_t ow_lo_raw = CeilDivPos(s.pad_left, s.stride_w);
  const int64_t last_start = iw_n - 1 - (kernel_w_ - 1) * s.dilation_w + s.pad_left;
  const int64_t ow_hi = flat ? ow_n : std::min(ow_n, last_start < 0 ? 0 : last_start / s.stride_w + 1);
  const int64_t ow_lo = flat ? 0 : std::min(ow_lo_raw, ow_hi);

  ThreadPool::For(pool, items, cost, [&](int64_t begin, int64_t end) {
    std::vector<float> strip(y_blocked ? 0 : static_cast<size_t>(k.max_filter_blocks * segment * b));
    std::vector<int64_t> interior_off(static_cast<size_t>(taps_total)), edge_off(static_cast<size_t>(taps_total));
    std::vector<int32_t> interior_idx(static_cast<size_t>(taps_total)), edge_idx(static_cast<size_t>(taps_total));
    for (int64_t item = begin; item < end; ++item) {
      const int64_t oh = item % oh_n;
      int64_t rest = item / oh_n;
      const int64_t chunk = rest % chunks;
      rest /= chunks;
      const int64_t g = rest % group_, n = rest / group_;
      const int64_t ob0 = chunk * per_chunk;
      const int fb = static_cast<int>(std::min(per_chunk, out_blocks_per_group_ - ob0));
      if (fb <= 0) continue;

      // Valid kernel rows for this output row.
      const int64_t ih0 = flat ? 0 : oh * s.stride_h - s.pad_top;
      const int64_t kh_lo = flat ? 0 : std::min(kernel_h_, CeilDivPos(-ih0, s.dilation_h));
      const int64_t kh_hi = flat ? 1 : std::min(kernel_h_, CeilDivPos(ih_n - ih0, s.dilation_h));
      int64_t interior_taps = 0;
      for (int64_t kh = kh_lo; kh < kh_hi; ++kh)
        for (int64_t kw = 0; kw < kernel_w_; ++kw) {
          interior_off[interior_taps] = kh * s.dilation_h * x_row + kw * s.dilation_w * x_col;
          interior_idx[interior_taps++] = static_cast<int32_t>(kh * kernel_w_ + kw);
        }

      DirectTileArgs a;
      const float* x_start = x + n * x_image + g * x_group;
      const float* w_start = packed_.data() + (g * out_blocks_per_group_ + ob0) * w_fb_stride;
      a.x_pixel_stride = s.stride_w * x_col;
      a.x_channel_stride = x_channel;
      a.x_block_stride = x_block;
      a.kernel_taps = taps_total;
      a.w_fb_stride = w_fb_stride;
      a.bias = bias.empty() ? nullptr : bias.data() + (g * out_blocks_per_group_ + ob0) * b;
      // Output of the tile starting at column ow.
      float* y_row = nullptr;
      const float* r_row = nullptr;
      if (y_blocked) {
        const int64_t off = n * y_image + ((g * mg) / b + ob0) * out_plane * b + oh * ow_n * b;
        y_row = y + off;
        r_row = args.residual != nullptr ? args.residual + off : nullptr;
        a.y_pixel_stride = b;
        a.y_fb_stride = out_plane * b;
        a.act = &args.activation;
      } else {
        a.y_pixel_stride = b;
        a.y_fb_stride = segment * b;
      }

      for (int64_t s0 = 0; s0 < ow_n; s0 += segment) {
        const int64_t s1 = std::min(ow_n, s0 + segment);
        auto tile = [&](int64_t ow, int px, const int64_t* off, const int32_t* idx, int64_t taps) {
          a.x_base = ih0 * x_row + (flat ? ow : ow * s.stride_w - s.pad_left) * x_col;
          a.tap_offsets = off;
          a.tap_index = idx;
          a.taps = taps;
          if (y_blocked) {
            a.y = y_row + ow * b;
            a.residual = r_row != nullptr ? r_row + ow * b : nullptr;
          } else {
            a.y = strip.data() + (ow - s0) * b;
          }
          k.direct_tile(a, fb, px);
        };
        auto edge = [&](int64_t ow) {
          const int64_t iw0 = ow * s.stride_w - s.pad_left;
          const int64_t kw_lo = std::min(kernel_w_, CeilDivPos(-iw0, s.dilation_w));
          const int64_t kw_hi = std::min(kernel_w_, CeilDivPos(iw_n - iw0, s.dilation_w));
          int64_t taps = 0;
          for (int64_t kh = kh_lo; kh < kh_hi; ++kh)
            for (int64_t kw = kw_lo; kw < kw_hi; ++kw) {
              edge_off[taps] = kh * s.dilation_h * x_row + kw * s.dilation_w * x_col;
              edge_idx[taps++] = static_cast<int32_t>(kh * kernel_w_ + kw);
            }
          tile(ow, 1, edge_off.data(), edge_idx.data(), taps);
        };
        for (int64_t cb0 = 0; cb0 < in_blocks_per_group_; cb0 += chunk_blocks) {
          const int64_t cbn = std::min(chunk_blocks, in_blocks_per_group_ - cb0);
          a.x = x_start + cb0 * x_block;
          a.w = w_start + cb0 * taps_total * b * b;
          a.in_blocks = cbn;
          a.last_block_channels = cb0 + cbn == in_blocks_per_group_ ? cg - (in_blocks_per_group_ - 1) * b : b;
          a.accumulate = cb0 > 0;
          a.finish = cb0 + cbn == in_blocks_per_group_;
          int64_t ow = s0;
          for (; ow < std::min(s1, ow_lo); ++ow) edge(ow);
          const int64_t in_end = std::min(s1, ow_hi);
          while (ow < in_end) {
            const int px = static_cast<int>(std::min<int64_t>(k.max_pixels, in_end - ow));
            tile(ow, px, interior_off.data(), interior_idx.data(), interior_taps);
            ow += px;
          }
          for (; ow < s1; ++ow) edge(ow);
        }

        if (!y_blocked) {
          for (int f = 0; f < fb; ++f) {
            const int64_t m0 = (ob0 + f) * b;
            const int64_t channels = std::min<int64_t>(b, mg - m0);
            const int64_t off = n * y_image + (g * mg + m0) * out_plane + oh * ow_n + s0;
            k.unblock(strip.data() + f * segment * b, s1 - s0, channels, y + off, out_plane,
                      args.residual != nullptr ? args.residual + off : nullptr, out_plane, &args.activation);
          }
        }
      }
    }
  });
}

}  // namespace onyx::linalg
