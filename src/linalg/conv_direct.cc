// DirectConv: weights packed once into output-channel blocks of the ISA's vector width; each
// task computes one output row, a few short rows (or, for pointwise convolutions, a run of the
// flattened image) of a few output blocks, in register tiles of up to max_pixels pixels that may
// span rows. The input is first copied into a zero-padded (and, with enough channels,
// NCHWc-blocked) image when it has padding or is big, so every tile takes every kernel tap with
// no edge cases; a padded input that needs no blocking, with long output rows, is read in place
// instead, the pixels at its border taking only the taps inside it (BorderTaps). NCHW output goes through a small blocked strip that is transposed into the
// output rows with the residual and activation applied while it is in L1.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include <unistd.h>

#include "linalg/conv.h"
#include "linalg/conv_scratch.h"
#include "linalg/f32_conv_kernel.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {
namespace {

// Weights of one input-channel chunk of a task: small enough to stay in L1 while the chunk
// sweeps a segment of output pixels.
// AVX-512 machines have 48 KB L1 data caches (AVX2 ones may have 32 KB): twice the chunk halves
// the accumulator reloads of pointwise projections with hundreds of input channels.
constexpr int64_t kChunkWeightBytes = 16 << 10, kWideChunkWeightBytes = 32 << 10;
// Output pixels per staged segment: a multiple of every register tile width.
constexpr int64_t kSegmentPixels = 96;
// NCHW inputs are reordered to NCHWc when pixels x kernel taps reach this (the copy is repaid).
constexpr int64_t kBlockInputMinWork = 256;
// Splitting an output row among tasks: at most this many parts, each at least this many pixels
// (a part's weights are reloaded per part).
constexpr int64_t kMaxColParts = 8, kMinPartPixels = 16;
// Padded NCHWc inputs are read in place when the border classes' tap lists (at most (2 kh + 1)
// x (2 kw + 1) classes of kh * kw taps) take at most this many slots; else they are copied.
constexpr int64_t kMaxBorderTapSlots = int64_t{1} << 16;
// ... and when output rows have at least this many pixels per border column (pixels whose window
// crosses the left or right padding): those run as short tiles at a fraction of the full tiles'
// speed and split the row's tiles, which on short rows costs more than the copy (3x3 stride 2,
// one border column: 20-pixel rows 10% slower in place, 40 level, 80 10% faster, 160 30%; 7x7
// maps 5% slower; ResNet's 7x7 stem, 3 of 112, level; YOLO's 6x6 stem, 2 of 320, 15% faster).
// A ratio of tile speeds measured with the input in L2 (conv_bench calls a layer again and
// again): it holds on any CPU where the copy stays in L2.
constexpr int64_t kMinRowPixelsPerBorderColumn = 48;
// ... or this many when the padded copy exceeds half of L2 (read at run time): the copy and the
// tiles' reads of it then go through L3 or memory. Inside the models on a 2 MB L2, ResNet-50's
// 3x3 stride 2 at 56x56 (128 channels, a 1.7 MB copy, 28-pixel rows, one border column) runs
// 12% faster in place (1902 against 2165 us), YOLO's at 80x80 (128 channels, 40-pixel rows)
// 14-31% faster; 20-pixel rows cost 10% in place even from L2, so 24.
constexpr int64_t kMinRowPixelsPerBorderColumnBigCopy = 24;

// How Run and RunPointwiseSpan split a group's work: output blocks in even chunks of at most
// max_filter_blocks (5 blocks with max 4 -> 2 + 3, 10 -> 3 + 3 + 4: chunk c takes blocks
// [Begin(c), Begin(c + 1))), input blocks in chunks of chunk_blocks whose weights stay in L1
// while the chunk sweeps a segment of pixels.
struct DirectSplit {
  int64_t out_blocks, chunks, per_chunk, chunk_blocks;
  DirectSplit(const ConvKernelTable& k, int64_t out_blocks_, int64_t in_blocks, int64_t taps)
      : out_blocks(out_blocks_),
        chunks((out_blocks_ + k.max_filter_blocks - 1) / k.max_filter_blocks),
        per_chunk((out_blocks_ + chunks - 1) / chunks),  // the most in a chunk
        chunk_blocks(std::clamp<int64_t>((k.block >= 16 ? kWideChunkWeightBytes : kChunkWeightBytes) /
                                             (per_chunk * taps * k.block * k.block * int64_t{sizeof(float)}),
                                         1, in_blocks)) {}
  int64_t Begin(int64_t chunk) const { return chunk * out_blocks / chunks; }
  int Blocks(int64_t chunk) const { return static_cast<int>(Begin(chunk + 1) - Begin(chunk)); }
};

// `pixels` (at least 1) in tiles of at most max_px evened out, without a division per tile: the
// first `extra` tiles take base + 1 pixels, the others base (27 pixels by 6 -> 6, 6, 5, 5, 5).
struct EvenTiles {
  int64_t tiles, base, extra;
  EvenTiles(int64_t pixels, int64_t max_px)
      : tiles((pixels + max_px - 1) / max_px), base(pixels / tiles), extra(pixels % tiles) {}
};

// Per core, as the OS reports it (512 KB where it does not).
int64_t L2Bytes() {
  static const int64_t bytes = [] {
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return l2 > 0 ? static_cast<int64_t>(l2) : int64_t{512} << 10;
  }();
  return bytes;
}

// Kernel positions k in [lo, hi) with 0 <= origin + k * dilation < size.
std::pair<int64_t, int64_t> InsideRange(int64_t origin, int64_t dilation, int64_t size, int64_t kernel) {
  const int64_t lo = std::min(kernel, origin >= 0 ? 0 : (-origin + dilation - 1) / dilation);
  const int64_t hi = origin >= size ? 0 : std::min(kernel, (size - origin + dilation - 1) / dilation);
  return {lo, std::max(lo, hi)};
}

// Padding read in place: a pixel whose window crosses the border takes only the taps inside the
// input (the padded ones would add zeros). Its class is (the range of kernel rows inside, the
// range of kernel columns inside); pixels of one class share one tap list, in kernel order.
struct BorderTaps {
  std::vector<int32_t> row_class, col_class;  // per output row / column: its range's index
  int64_t col_classes = 0, taps_total = 0;
  // Class r * col_classes + c: count[] taps at offsets / index + class * taps_total.
  std::vector<int64_t> offsets;
  std::vector<int32_t> index, count;

  BorderTaps(const Conv2dShape& s, int64_t x_row, int64_t x_col) : taps_total(s.kernel_h * s.kernel_w) {
    std::vector<std::pair<int64_t, int64_t>> rows, cols;
    auto classify = [](int64_t outs, int64_t stride, int64_t pad, int64_t dilation, int64_t size, int64_t kernel,
                       std::vector<std::pair<int64_t, int64_t>>& ranges, std::vector<int32_t>& of) {
      of.resize(static_cast<size_t>(outs));
      for (int64_t o = 0; o < outs; ++o) {
        const auto r = InsideRange(o * stride - pad, dilation, size, kernel);
        const auto it = std::find(ranges.begin(), ranges.end(), r);
        of[o] = static_cast<int32_t>(it - ranges.begin());
        if (it == ranges.end()) ranges.push_back(r);
      }
    };
    classify(s.out_h, s.stride_h, s.pad_top, s.dilation_h, s.in_h, s.kernel_h, rows, row_class);
    classify(s.out_w, s.stride_w, s.pad_left, s.dilation_w, s.in_w, s.kernel_w, cols, col_class);
    col_classes = static_cast<int64_t>(cols.size());
    const size_t classes = rows.size() * cols.size();
    offsets.resize(classes * taps_total);
    index.resize(classes * taps_total);
    count.assign(classes, 0);
    for (size_t r = 0; r < rows.size(); ++r)
      for (size_t c = 0; c < cols.size(); ++c) {
        const size_t cls = r * cols.size() + c;
        int32_t n = 0;
        for (int64_t kh = rows[r].first; kh < rows[r].second; ++kh)
          for (int64_t kw = cols[c].first; kw < cols[c].second; ++kw, ++n) {
            offsets[cls * taps_total + n] = kh * s.dilation_h * x_row + kw * s.dilation_w * x_col;
            index[cls * taps_total + n] = static_cast<int32_t>(kh * s.kernel_w + kw);
          }
        count[cls] = n;
      }
  }
  static bool Pays(const Conv2dShape& s, int64_t copy_bytes, int64_t l2_bytes) {
    if ((2 * s.kernel_h + 1) * (2 * s.kernel_w + 1) * s.kernel_h * s.kernel_w > kMaxBorderTapSlots) return false;
    int64_t border_cols = 0;
    for (int64_t ow = 0; ow < s.out_w; ++ow) {
      const auto r = InsideRange(ow * s.stride_w - s.pad_left, s.dilation_w, s.in_w, s.kernel_w);
      border_cols += r.first > 0 || r.second < s.kernel_w ? 1 : 0;
    }
    const bool big_copy = copy_bytes > l2_bytes / 2;
    return border_cols * (big_copy ? kMinRowPixelsPerBorderColumnBigCopy : kMinRowPixelsPerBorderColumn) <= s.out_w;
  }
};

}  // namespace

bool DirectConvReadsPaddingInPlace(const Conv2dShape& s, int64_t copy_bytes, int64_t l2_bytes) {
  return BorderTaps::Pays(s, copy_bytes, l2_bytes);
}

// The same L1 budget as an input-channel chunk's (DirectSplit): on 16-wide blocks the stem's 49
// taps of 3 channels x 64 filters (37 KB) run in 2 passes instead of 3 (16 KB), ResNet-50's
// stem 6-9% faster inside the model (1 thread, loaded Xeon): each pass stores and reloads the
// accumulators.
int64_t DirectConvTapsPerPass(int64_t block, int64_t filter_blocks, int64_t channels, int64_t taps) {
  const int64_t budget = block >= 16 ? kWideChunkWeightBytes : kChunkWeightBytes;
  return std::clamp<int64_t>(budget / (filter_blocks * channels * block * int64_t{sizeof(float)}), 1, taps);
}

DirectConv::DirectConv(const Conv2dShape& s, const float* w, const PackSource* source)
    : kernels_(&SelectedConvKernels()),
      out_channels_(s.out_channels),
      group_(s.group),
      in_per_group_(s.in_channels / s.group),
      kernel_h_(s.kernel_h),
      kernel_w_(s.kernel_w),
      taps_per_input_(s.kernel_h * s.kernel_w) {
  const int64_t b = kernels_->block;
  const int64_t mg = out_channels_ / group_, cg = in_per_group_, taps = kernel_h_ * kernel_w_;
  out_blocks_per_group_ = (mg + b - 1) / b;
  in_blocks_per_group_ = (cg + b - 1) / b;
  // 64-byte aligned: an AVX-512 weight load across two cache lines costs two.
  auto fill = [&](float* dst) {
    for (int64_t g = 0; g < group_; ++g)
      for (int64_t ob = 0; ob < out_blocks_per_group_; ++ob)
        for (int64_t cb = 0; cb < in_blocks_per_group_; ++cb)
          for (int64_t t = 0; t < taps; ++t)
            for (int64_t c = 0; c < b; ++c)
              for (int64_t o = 0; o < b; ++o, ++dst) {
                const int64_t m = ob * b + o, ci = cb * b + c;
                *dst = m < mg && ci < cg ? w[((g * mg + m) * cg + ci) * taps + t] : 0.0f;
              }
  };
  packed_ = MakePack(source, name() + ":b" + std::to_string(b) + ":g" + std::to_string(group_),
                     static_cast<size_t>(group_ * out_blocks_per_group_ * in_blocks_per_group_ * taps * b * b), fill);
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
  const bool y_blocked = args.y_layout == ConvLayout::kNchwc;
  const int64_t out_plane = s.out_h * s.out_w;
  if (out_plane == 0 || s.batch == 0) return;

  // The input the tiles read: padded (so every tap of every pixel is inside it) and, when there
  // are enough channels, blocked (so a tile broadcasts from a few contiguous streams instead of
  // one plane per channel).
  const PreparedInput in = PrepareInput(s, x, args.x_layout, pool);
  const bool x_blocked = in.blocked;
  // A pointwise convolution is one row of out_plane pixels.
  const bool flat = in.pad_top == 0 && in.pad_left == 0 && s.kernel_h == 1 && s.kernel_w == 1 && s.stride_h == 1 &&
                    s.stride_w == 1 && s.out_h == in.rows && s.out_w == in.cols;
  const int64_t oh_n = flat ? 1 : s.out_h, ow_n = flat ? out_plane : s.out_w;
  const int64_t plane = in.rows * in.cols;
  const int64_t x_col = x_blocked ? b : 1, x_row = in.cols * x_col;
  const int64_t x_channel = x_blocked ? 1 : plane, x_block = b * plane;
  const int64_t x_image = x_blocked ? (s.in_channels + b - 1) / b * plane * b : s.in_channels * plane;
  const int64_t x_group = x_blocked ? cg / b * plane * b : cg * plane;  // group > 1 blocked: cg % b == 0
  const int64_t out_blocks_total = (out_channels_ + b - 1) / b;
  const int64_t y_image = y_blocked ? out_blocks_total * out_plane * b : out_channels_ * out_plane;

  // Bias padded to whole blocks per group.
  std::vector<float> bias;
  if (args.bias != nullptr) {
    bias.assign(static_cast<size_t>(group_ * out_blocks_per_group_ * b), 0.0f);
    for (int64_t g = 0; g < group_; ++g)
      for (int64_t m = 0; m < mg; ++m) bias[g * out_blocks_per_group_ * b + m] = args.bias[g * mg + m];
  }

  // Every tap of the (padded) input.
  std::vector<int64_t> tap_off(static_cast<size_t>(taps_total));
  std::vector<int32_t> tap_idx(static_cast<size_t>(taps_total));
  for (int64_t kh = 0, t = 0; kh < kernel_h_; ++kh)
    for (int64_t kw = 0; kw < kernel_w_; ++kw, ++t) {
      tap_off[t] = kh * s.dilation_h * x_row + kw * s.dilation_w * x_col;
      tap_idx[t] = static_cast<int32_t>(t);
    }

  const bool bounded = in.bounded;
  const std::unique_ptr<const BorderTaps> border = bounded ? std::make_unique<BorderTaps>(s, x_row, x_col) : nullptr;

  // A task takes one chunk of output blocks.
  const DirectSplit split(k, out_blocks_per_group_, in_blocks_per_group_, taps_total);
  const int64_t chunks = split.chunks, per_chunk = split.per_chunk, chunk_blocks = split.chunk_blocks;
  const int64_t w_fb_stride = in_blocks_per_group_ * taps_total * b * b;
  const int64_t segment = kSegmentPixels;
  // With a single input block (few channels, e.g. an RGB first layer) the chunks split the
  // kernel taps instead: a tap's weights are only the block's channels.
  const int64_t tap_chunk = in_blocks_per_group_ > 1 ? taps_total : DirectConvTapsPerPass(b, per_chunk, cg, taps_total);
  // Short rows are grouped so a weight chunk serves a whole segment of pixels.
  const int64_t rows_per_task = ow_n >= segment ? 1 : std::max<int64_t>(1, segment / ow_n);
  const int64_t row_groups = (oh_n + rows_per_task - 1) / rows_per_task;
  const int64_t seg_cols = rows_per_task > 1 ? ow_n : segment;
  // Pointwise planes are one long row: with few output blocks that leaves few tasks, or a count
  // the threads share badly (3 tasks on 2 threads: 2 against 1), so the row is split among tasks
  // too, into the fewest equal parts (of at least kMinPartPixels) that give every thread as many
  // tasks, and at least two each (four on big planes). A part reloads the chunk's weights, so an
  // imbalance under a twelfth (15 tasks on 2 threads) is left alone.
  const int64_t base_items = s.batch * group_ * chunks * row_groups;
  const int64_t threads = pool != nullptr ? pool->num_threads() : 1;
  const int64_t min_items = (ow_n >= 4 * segment ? 4 : 2) * threads;
  int64_t col_parts = 1;
  if (threads > 1 && rows_per_task == 1 &&
      (base_items < min_items || (base_items % threads != 0 && (threads - base_items % threads) * 12 > base_items))) {
    const int64_t max_parts = std::clamp<int64_t>(ow_n / kMinPartPixels, 1, kMaxColParts);
    col_parts = std::min(max_parts, (min_items + base_items - 1) / base_items);  // when none fits
    for (int64_t c = 1; c <= max_parts; ++c)
      if (base_items * c % threads == 0 && base_items * c >= min_items) {
        col_parts = c;
        break;
      }
  }
  const int64_t items = base_items * col_parts;
  const double cost =
      2.0 * static_cast<double>(per_chunk * b * rows_per_task * ow_n * cg * taps_total) / static_cast<double>(col_parts) +
      1.0;

  // Blocked output with SiLU, Sigmoid, ...: activated a segment at a time while it is in L1, one
  // call per filter block instead of one per register tile (6 vectors).
  const bool defer_act = y_blocked && args.activation.kind != ConvActivation::kNone &&
                         args.activation.kind != ConvActivation::kRelu &&
                         args.activation.kind != ConvActivation::kClip;
  ThreadPool::For(pool, items, cost, [&](int64_t begin, int64_t end) {
    const ConvScratch strip(ScratchSlot::kTaskA, y_blocked ? 0 : static_cast<size_t>(k.max_filter_blocks * segment * b));
    int64_t x_offsets[kSegmentPixels];
    // The segment's tiles (first pixel, pixel count, whether it stays in one row), laid out once
    // per segment and replayed for every input-channel chunk.
    int32_t tile_q[kSegmentPixels], tile_px[kSegmentPixels];
    bool tile_one_row[kSegmentPixels];
    // Runs of the segment's pixels that take the same taps (with padding read in place; else one
    // run): run r is pixels [run_q[r], run_q[r + 1]) of border class run_class[r].
    int32_t run_q[kSegmentPixels + 1], run_class[kSegmentPixels], tile_class[kSegmentPixels];
    for (int64_t item = begin; item < end; ++item) {
      const int64_t part = item % col_parts;
      const int64_t rg = (item / col_parts) % row_groups;
      int64_t rest = item / col_parts / row_groups;
      const int64_t chunk = rest % chunks;
      rest /= chunks;
      const int64_t g = rest % group_, n = rest / group_;
      const int64_t ob0 = split.Begin(chunk);
      const int fb = split.Blocks(chunk);
      const int64_t oh0 = rg * rows_per_task, oh1 = std::min(oh_n, oh0 + rows_per_task);

      DirectTileArgs a;
      const float* x_start = in.data + n * x_image + g * x_group;
      const float* w_start = packed_.data() + (g * out_blocks_per_group_ + ob0) * w_fb_stride;
      a.x_pixel_stride = s.stride_w * x_col;
      a.x_channel_stride = x_channel;
      a.x_block_stride = x_block;
      a.kernel_taps = taps_total;
      a.w_fb_stride = w_fb_stride;
      a.bias = bias.empty() ? nullptr : bias.data() + (g * out_blocks_per_group_ + ob0) * b;
      a.y_pixel_stride = b;
      const int64_t y_base = y_blocked ? n * y_image + ((g * mg) / b + ob0) * out_plane * b : 0;
      if (y_blocked) {
        a.y_fb_stride = out_plane * b;
        // A costly activation runs once over each finished segment (below) rather than per tile.
        a.act = defer_act ? nullptr : &args.activation;
      } else {
        a.y_fb_stride = segment * b;
      }

      // The part's columns [part * ow_n / col_parts, (part + 1) * ow_n / col_parts), a segment at a time.
      const int64_t cols_end = (part + 1) * ow_n / col_parts;
      for (int64_t s0 = part * ow_n / col_parts; s0 < cols_end; s0 += seg_cols) {
        const int64_t s1 = std::min(cols_end, s0 + seg_cols);
        // The segment's pixels, row after row, in tiles of at most max_pixels evened out (27
        // pixels -> 6, 6, 5, 5, 5); a tile may span rows, so each pixel has its input offset.
        const int64_t width = s1 - s0, count = (oh1 - oh0) * width;
        const int64_t max_px = k.max_pixels[fb];
        // Stepped, not multiplied: a vectorized 64-bit multiply is emulated without AVX-512DQ,
        // and this loop was half of the task loop's own time on MobileNetV2's narrow layers.
        const int64_t col_step = s.stride_w * x_col;
        for (int64_t oh = oh0, q = 0; oh < oh1; ++oh) {
          const int64_t row_origin = flat ? 0 : (oh * s.stride_h + in.pad_top - s.pad_top) * x_row;
          int64_t offset = row_origin + (s0 * s.stride_w + in.pad_left - s.pad_left) * x_col;
          for (int64_t ow = s0; ow < s1; ++ow, ++q, offset += col_step) x_offsets[q] = offset;
        }
        int64_t runs = 1;
        run_q[0] = 0;
        run_class[0] = 0;
        if (bounded) {
          runs = 0;
          for (int64_t oh = oh0, q = 0; oh < oh1; ++oh) {
            const int64_t row_class = border->row_class[oh] * border->col_classes;
            for (int64_t ow = s0; ow < s1; ++ow, ++q) {
              const int32_t cls = static_cast<int32_t>(row_class + border->col_class[ow]);
              if (runs == 0 || cls != run_class[runs - 1]) {
                run_q[runs] = static_cast<int32_t>(q);
                run_class[runs++] = cls;
              }
            }
          }
        }
        run_q[runs] = static_cast<int32_t>(count);
        // Each run in tiles of at most max_px evened out.
        int64_t tiles = 0;
        for (int64_t r = 0, col = 0; r < runs; ++r) {
          const EvenTiles even(run_q[r + 1] - run_q[r], max_px);
          for (int64_t t = 0, q = run_q[r]; t < even.tiles; ++t, ++tiles) {
            const int64_t px = even.base + (t < even.extra ? 1 : 0);
            tile_q[tiles] = static_cast<int32_t>(q);
            tile_px[tiles] = static_cast<int32_t>(px);
            tile_class[tiles] = run_class[r];
            // Within one row the pixels are evenly spaced: the stride form of the tile.
            tile_one_row[tiles] = col + px <= width;
            q += px;
            col += px;
            while (col >= width) col -= width;
          }
        }
        // Consecutive pixels of the segment are consecutive in y (whole rows when it has several).
        const int64_t y_off = y_base + (oh0 * ow_n + s0) * b;
        for (int64_t cb0 = 0; cb0 < in_blocks_per_group_; cb0 += chunk_blocks)
          for (int64_t t0 = 0; t0 < taps_total; t0 += tap_chunk) {
            const int64_t cbn = std::min(chunk_blocks, in_blocks_per_group_ - cb0);
            a.x = x_start + cb0 * x_block;
            a.w = w_start + cb0 * taps_total * b * b;
            a.in_blocks = cbn;
            a.last_block_channels = cb0 + cbn == in_blocks_per_group_ ? cg - (in_blocks_per_group_ - 1) * b : b;
            a.tap_offsets = tap_off.data() + t0;
            a.tap_index = tap_idx.data() + t0;
            a.taps = std::min(tap_chunk, taps_total - t0);
            a.accumulate = cb0 > 0 || t0 > 0;
            a.finish = cb0 + cbn == in_blocks_per_group_ && t0 + a.taps == taps_total;
            const int64_t t1 = t0 + a.taps;
            for (int64_t t = 0; t < tiles; t += a.tiles) {
              const int64_t q = tile_q[t];
              const int px = tile_px[t];
              const bool one_row = tile_one_row[t];
              a.x_base = one_row ? x_offsets[q] : 0;
              a.x_pixel_offsets = one_row ? nullptr : x_offsets + q;
              // Equal tiles that continue the same row (and take the same taps) go in one call.
              a.tiles = 1;
              if (one_row)
                while (t + a.tiles < tiles && tile_one_row[t + a.tiles] && tile_px[t + a.tiles] == px &&
                       tile_class[t + a.tiles] == tile_class[t] &&
                       x_offsets[tile_q[t + a.tiles]] == a.x_base + a.tiles * px * col_step)
                  ++a.tiles;
              if (bounded) {  // the class's taps of this tap chunk (it may have none: bias only)
                const size_t first = static_cast<size_t>(tile_class[t] * border->taps_total);
                const int32_t* index = border->index.data() + first;
                const int32_t* end = index + border->count[tile_class[t]];
                const int32_t* lo = std::lower_bound(index, end, static_cast<int32_t>(t0));
                a.tap_index = lo;
                a.tap_offsets = border->offsets.data() + first + (lo - index);
                a.taps = std::lower_bound(lo, end, static_cast<int32_t>(t1)) - lo;
                if (a.taps == 0 && a.accumulate && !a.finish) continue;
              }
              if (y_blocked) {
                a.y = y + y_off + q * b;
                a.residual = args.residual != nullptr ? args.residual + y_off + q * b : nullptr;
              } else {
                a.y = strip.get() + q * b;
              }
              k.direct_tile(a, fb, px);
            }
          }
        if (defer_act)
          for (int f = 0; f < fb; ++f) k.epilogue_blocked(y + y_off + f * a.y_fb_stride, count, nullptr, nullptr, &args.activation);
        if (!y_blocked) {
          for (int64_t oh = oh0; oh < oh1; ++oh)
            for (int f = 0; f < fb; ++f) {
              const int64_t m0 = (ob0 + f) * b;
              const int64_t channels = std::min<int64_t>(b, mg - m0);
              const int64_t off = n * y_image + (g * mg + m0) * out_plane + oh * ow_n + s0;
              k.unblock(strip.get() + (f * segment + (oh - oh0) * (s1 - s0)) * b, s1 - s0, channels, y + off,
                        out_plane, args.residual != nullptr ? args.residual + off : nullptr, out_plane,
                        &args.activation);
            }
        }
      }
    }
  });
}

void DirectConv::RunPointwiseSpan(const float* x, int64_t x_block_stride, int64_t pixels, float* y,
                                  int64_t y_block_stride, const float* residual, const float* padded_bias,
                                  const ConvActivation& act) const {
  const ConvKernelTable& k = *kernels_;
  const int64_t b = k.block, cg = in_per_group_;
  // Run's split (one tap), pixels in segments.
  const DirectSplit split(k, out_blocks_per_group_, in_blocks_per_group_, 1);
  const int64_t chunk_blocks = split.chunk_blocks;
  const int64_t w_fb_stride = in_blocks_per_group_ * b * b;
  const bool defer_act = act.kind != ConvActivation::kNone && act.kind != ConvActivation::kRelu &&
                         act.kind != ConvActivation::kClip;
  const int64_t tap_offset = 0;
  const int32_t tap_index = 0;
  for (int64_t chunk = 0; chunk < split.chunks; ++chunk) {
    const int64_t ob0 = split.Begin(chunk);
    const int fb = split.Blocks(chunk);
    DirectTileArgs a;
    a.x_pixel_stride = b;
    a.x_channel_stride = 1;
    a.x_block_stride = x_block_stride;
    a.kernel_taps = 1;
    a.tap_offsets = &tap_offset;
    a.tap_index = &tap_index;
    a.taps = 1;
    a.w_fb_stride = w_fb_stride;
    a.bias = padded_bias != nullptr ? padded_bias + ob0 * b : nullptr;
    a.y_pixel_stride = b;
    a.y_fb_stride = y_block_stride;
    a.act = defer_act ? nullptr : &act;
    float* y_chunk = y + ob0 * y_block_stride;
    const float* r_chunk = residual != nullptr ? residual + ob0 * y_block_stride : nullptr;
    for (int64_t s0 = 0; s0 < pixels; s0 += kSegmentPixels) {
      const int64_t count = std::min(kSegmentPixels, pixels - s0);
      const EvenTiles even(count, k.max_pixels[fb]);
      for (int64_t cb0 = 0; cb0 < in_blocks_per_group_; cb0 += chunk_blocks) {
        const int64_t cbn = std::min(chunk_blocks, in_blocks_per_group_ - cb0);
        a.x = x + cb0 * x_block_stride;
        a.w = packed_.data() + ob0 * w_fb_stride + cb0 * b * b;
        a.in_blocks = cbn;
        a.last_block_channels = cb0 + cbn == in_blocks_per_group_ ? cg - (in_blocks_per_group_ - 1) * b : b;
        a.accumulate = cb0 > 0;
        a.finish = cb0 + cbn == in_blocks_per_group_;
        // Two runs of equal tiles, one call each.
        for (int64_t part = 0, q = s0; part < 2; ++part) {
          const int64_t n = part == 0 ? even.extra : even.tiles - even.extra;
          const int px = static_cast<int>(part == 0 ? even.base + 1 : even.base);
          if (n == 0) continue;
          a.tiles = n;
          a.x_base = q * b;
          a.y = y_chunk + q * b;
          a.residual = r_chunk != nullptr ? r_chunk + q * b : nullptr;
          k.direct_tile(a, fb, px);
          q += n * px;
        }
      }
      if (defer_act)
        for (int f = 0; f < fb; ++f)
          k.epilogue_blocked(y_chunk + f * y_block_stride + s0 * b, count, nullptr, nullptr, &act);
    }
  }
}

DirectConv::PreparedInput DirectConv::PrepareInput(const Conv2dShape& s, const float* x, ConvLayout layout,
                                                   ThreadPool* pool) const {
  const ConvKernelTable& k = *kernels_;
  const int64_t b = k.block, cg = in_per_group_;
  const bool padded = s.pad_top > 0 || s.pad_left > 0 || s.pad_bottom > 0 || s.pad_right > 0;
  PreparedInput in;
  in.data = x;
  in.rows = s.in_h;
  in.cols = s.in_w;
  in.blocked = layout == ConvLayout::kNchwc;
  const bool block = !in.blocked && cg >= b / 2 && (group_ == 1 || cg % b == 0) &&
                     s.in_h * s.in_w * taps_per_input_ >= kBlockInputMinWork;
  if (!padded && !block) return in;  // read as given
  // An input that needs no blocking, with long rows, is read in place, the tiles skipping the
  // taps in the padding: a padded copy of a big map is a pass over memory, about a third of the
  // time of YOLO's 3x3 stride-2 32->64 at 320x320 and a fifth of its 6x6 stem on RGB planes.
  const int64_t copy_floats = s.batch * (in.blocked ? (s.in_channels + b - 1) / b * b : s.in_channels) *
                              (s.in_h + s.pad_top + s.pad_bottom) * (s.in_w + s.pad_left + s.pad_right);
  if (!block && BorderTaps::Pays(s, copy_floats * int64_t{sizeof(float)}, L2Bytes())) {
    in.bounded = true;
    return in;
  }
  // Only the rows and columns some window reaches.
  const int64_t need_rows = (s.out_h - 1) * s.stride_h + (kernel_h_ - 1) * s.dilation_h + 1;
  const int64_t need_cols = (s.out_w - 1) * s.stride_w + (kernel_w_ - 1) * s.dilation_w + 1;
  in.pad_top = s.pad_top;
  in.pad_left = s.pad_left;
  in.rows = std::max(need_rows, s.pad_top + s.in_h);
  in.cols = std::max(need_cols, s.pad_left + s.in_w);
  const bool out_blocked = in.blocked || block;
  const int64_t blocks = (s.in_channels + b - 1) / b;
  const int64_t plane = in.rows * in.cols;
  const int64_t units = out_blocked ? s.batch * blocks : s.batch * s.in_channels;  // blocks or planes
  const int64_t width = out_blocked ? b : 1;                                          // floats per pixel
  const int64_t unit_floats = plane * width, row_floats = in.cols * width;
  in.storage = std::make_unique<ConvScratch>(ScratchSlot::kInput, static_cast<size_t>(units * unit_floats));
  float* dst = in.storage->get();
  const int64_t in_plane = s.in_h * s.in_w;
  // Row by row, so that one big block (a layer with few channels) is copied by every thread.
  ThreadPool::For(pool, units * in.rows, static_cast<double>(row_floats) * 2.0, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t u = item / in.rows, ih = item % in.rows - in.pad_top;
      float* row = dst + u * unit_floats + (ih + in.pad_top) * row_floats;
      if (ih < 0 || ih >= s.in_h) {  // a padding row
        std::fill(row, row + row_floats, 0.0f);
        continue;
      }
      std::fill(row, row + in.pad_left * width, 0.0f);
      std::fill(row + (in.pad_left + s.in_w) * width, row + row_floats, 0.0f);
      float* body = row + in.pad_left * width;
      if (in.blocked) {  // NCHWc given: copy rows of block u
        std::copy_n(x + (u * in_plane + ih * s.in_w) * b, s.in_w * b, body);
      } else if (out_blocked) {  // NCHW -> NCHWc, block u = (n, cb)
        const int64_t n = u / blocks, c0 = (u % blocks) * b;
        k.block_rows(x + ((n * s.in_channels + c0) * s.in_h + ih) * s.in_w, in_plane,
                     std::min<int64_t>(b, s.in_channels - c0), s.in_w, body);
      } else {  // NCHW plane u, padded
        std::copy_n(x + u * in_plane + ih * s.in_w, s.in_w, body);
      }
    }
  });
  in.data = dst;
  in.blocked = out_blocked;
  return in;
}

}  // namespace onyx::linalg
