// DepthwisePointwiseConv with the block's expanding pointwise in front (WithExpand): a task
// makes the rows of the expanded image that its band's depthwise window reads, into a buffer
// that stays in cache, instead of the whole expanded image (MobileNetV2: 96 x 112 x 112 floats)
// going to memory and back. Each thread takes one run of consecutive bands and keeps the rows two
// neighbouring bands share (the window's overlap), so each expanded row is computed once per
// thread, not once per band.
#include <algorithm>
#include <cstring>
#include <vector>

#include "linalg/conv_depthwise_pointwise.h"
#include "linalg/conv_scratch.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {

void DepthwisePointwiseConv::RunExpanded(const Conv2dShape& dw, const float* x, float* y,
                                         const DepthwisePointwiseArgs& args, ThreadPool* pool) const {
  const int64_t b = block();
  const int64_t in_blocks = (in_channels_ + b - 1) / b, blocks = (channels_ + b - 1) / b;
  const int64_t out_blocks = (out_channels_ + b - 1) / b;
  const int64_t in_plane = dw.in_h * dw.in_w, out_plane = dw.out_h * dw.out_w;
  const int64_t x_image = in_blocks * in_plane * b, y_image = out_blocks * out_plane * b;
  const std::vector<float> expand_bias = PaddedBlockBias(args.expand_bias, channels_, b);
  const std::vector<float> dw_bias = PaddedBlockBias(args.dw_bias, channels_, b);
  const std::vector<float> bias = PaddedBlockBias(args.bias, out_channels_, b);
  const int64_t threads = pool != nullptr ? pool->num_threads() : 1;
  const Bands bands = SplitIntoBands(dw, threads);
  const int64_t window_h = (dw.kernel_h - 1) * dw.dilation_h + 1;
  // Expanded rows a band reads at most, and the floats between blocks of the buffer holding them.
  const int64_t max_in_rows = std::min(dw.in_h, (bands.max_rows - 1) * dw.stride_h + window_h);
  const int64_t e_stride = max_in_rows * dw.in_w * b;
  const int64_t items = dw.batch * bands.count;
  // One run of bands per thread: each run's first band computes its overlap rows again.
  const int64_t runs = std::min(items, threads);
  const double cost = 2.0 * static_cast<double>(items / runs + 1) *
                      (static_cast<double>(max_in_rows * dw.in_w * in_blocks * b * blocks * b) +
                       static_cast<double>(bands.max_rows * dw.out_w * blocks * b) *
                           static_cast<double>(dw.kernel_h * dw.kernel_w + out_blocks * b));
  ThreadPool::For(pool, runs, cost, [&](int64_t run_begin, int64_t run_end) {
    const ConvScratch band(ScratchSlot::kTaskA, static_cast<size_t>(blocks * b * bands.max_rows * dw.out_w));
    const ConvScratch expanded(ScratchSlot::kTaskB, static_cast<size_t>(blocks * e_stride));
    float* e = expanded.get();
    int64_t held_image = -1, held0 = 0, held1 = 0;  // expanded rows [held0, held1) of held_image in e
    for (int64_t item = run_begin * items / runs; item < run_end * items / runs; ++item) {
      const int64_t n = item / bands.count, i = item % bands.count;
      const int64_t oh0 = i * dw.out_h / bands.count, oh1 = (i + 1) * dw.out_h / bands.count;
      if (oh0 == oh1) continue;
      // Input rows the band's windows touch (rows outside the image are padding).
      const int64_t r0 = std::max<int64_t>(0, oh0 * dw.stride_h - dw.pad_top);
      // None where the padding is as tall as the window: the band is then bias alone.
      const int64_t r1 = std::max(r0, std::min(dw.in_h, (oh1 - 1) * dw.stride_h - dw.pad_top + window_h));
      int64_t have = r0;  // rows [r0, have) are already in e, from row 0 on
      if (held_image == n && held0 <= r0 && r0 < held1) {
        have = std::min(held1, r1);
        if (r0 > held0)
          for (int64_t cb = 0; cb < blocks; ++cb)
            std::memmove(e + cb * e_stride, e + cb * e_stride + (r0 - held0) * dw.in_w * b,
                         static_cast<size_t>((have - r0) * dw.in_w * b) * sizeof(float));
      }
      if (have < r1)
        expand_.RunPointwiseSpan(x + n * x_image + have * dw.in_w * b, in_plane * b, (r1 - have) * dw.in_w,
                                 e + (have - r0) * dw.in_w * b, e_stride, nullptr,
                                 expand_bias.empty() ? nullptr : expand_bias.data(), args.expand_activation);
      held_image = n;
      held0 = r0;
      held1 = r1;
      // The depthwise over e as an image of its rows: the same windows, shifted up by r0.
      Conv2dShape rows = dw;
      rows.batch = 1;
      rows.in_h = r1 - r0;
      rows.pad_top = dw.pad_top + r0 - oh0 * dw.stride_h;
      rows.out_h = oh1 - oh0;
      rows.pad_bottom = (rows.out_h - 1) * dw.stride_h + window_h - rows.in_h - rows.pad_top;
      const int64_t band_stride = (oh1 - oh0) * dw.out_w * b;
      depthwise_.RunBlockedRows(rows, e, 0, oh1 - oh0, band.get(), band_stride,
                                dw_bias.empty() ? nullptr : dw_bias.data(), args.dw_activation, e_stride);
      const int64_t y_off = n * y_image + oh0 * dw.out_w * b;
      pointwise_.RunPointwiseSpan(band.get(), band_stride, (oh1 - oh0) * dw.out_w, y + y_off, out_plane * b,
                                  args.residual != nullptr ? args.residual + y_off : nullptr,
                                  bias.empty() ? nullptr : bias.data(), args.activation);
    }
  });
}

}  // namespace onyx::linalg
