// WinogradConv: F(4x4, 3x3). The weights are transformed once (U = G g G^T, in double) into
// 36 blocked matrices. A run takes each image's 4x4 output tiles (row-major) in even chunks,
// sized so the transformed input V and the products M of a chunk stay near the L2 cache:
//   1. input transform: per run of tiles within a tile row, 6 input rows blocked by channels,
//      -> V[36][tiles][C]
//   2. 36 products M[xi] = V[xi] U[xi] with the direct-convolution register tiles
//   3. output transform with bias, residual and activation, straight into NCHWc output (NCHW
//      goes through a blocked strip of 4 rows that is transposed).
// Chunks run in parallel, a multiple of the thread count of them so that every thread gets the
// same number of tiles, when there are enough; otherwise each phase is parallel.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "linalg/conv.h"
#include "linalg/conv_scratch.h"
#include "linalg/f32_conv_kernel.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {
namespace {

// V (and M) floats per chunk: 576 KiB, so V + M stay in a 2 MiB L2. Every chunk streams all
// 36 * C * M transformed weights, so few, large chunks pay: a 256-channel 14x14 layer (4 bands of
// 36864 floats) is then one chunk instead of 3 + 1 bands, 215 -> 280-290 GFLOP/s (conv_bench).
constexpr int64_t kChunkFloats = int64_t{9} << 14;

// Per-task buffers, the thread's kept ones (conv_scratch.h): every float is written before it
// is read, but for Zeros' (a padding row), zeroed here. V, M and the zeros outlive a phased
// run's loops, so the per-task ones take other slots.
constexpr ScratchSlot kV = ScratchSlot::kTaskA, kM = ScratchSlot::kTaskB, kZeros = ScratchSlot::kTaskC;
constexpr ScratchSlot kPatch = ScratchSlot::kTaskD, kRows = ScratchSlot::kTaskE, kStrip = ScratchSlot::kTaskF;
std::unique_ptr<ConvScratch> Scratch(ScratchSlot slot, size_t floats) { return std::make_unique<ConvScratch>(slot, floats); }
std::unique_ptr<ConvScratch> Zeros(ScratchSlot slot, size_t floats) {
  auto s = std::make_unique<ConvScratch>(slot, floats);
  std::fill_n(s->get(), floats, 0.0f);
  return s;
}

}  // namespace

WinogradConv::WinogradConv(const Conv2dShape& s, const float* w, ThreadPool* pool, const PackSource* source)
    : kernels_(&SelectedConvKernels()), in_channels_(s.in_channels), out_channels_(s.out_channels) {
  const int64_t b = kernels_->block;
  in_blocks_ = (in_channels_ + b - 1) / b;
  out_blocks_ = (out_channels_ + b - 1) / b;
  // Aligned: vector weight loads that straddle cache lines cost ~12% in the direct conv tiles.
  const size_t count = static_cast<size_t>(36 * out_blocks_ * in_blocks_ * b * b);
  auto fill = [&](float* out) {
    // Channels past the counts (in a last, partial block) stay zero; the rest is all written.
    if (in_channels_ % b != 0 || out_channels_ % b != 0) std::fill_n(out, count, 0.0f);
    // Element xi of filter (m, c) goes to [xi][m / b][c / b][c % b][m % b]. The b filters of one
    // output block and one input channel are transformed together (the ISA's kernel, on double
    // vectors), so each of their 36 elements fills one run of b floats (a cache line) at once:
    // filter by filter, each line was written b times far apart, through 4x the weights' size
    // (181 MB for ResNet-50), and the misses were most of a session's creation.
    const int64_t xi_stride = out_blocks_ * in_blocks_ * b * b;
    ThreadPool::For(pool, out_blocks_, static_cast<double>(100 * in_channels_ * b), [&](int64_t mb_begin, int64_t mb_end) {
      for (int64_t mb = mb_begin; mb < mb_end; ++mb) {
        WinogradWeightsArgs args;
        args.w = w + mb * b * in_channels_ * 9;
        args.filters = std::min(b, out_channels_ - mb * b);
        args.in_channels = in_channels_;
        args.xi_stride = xi_stride;
        args.out = out + mb * in_blocks_ * b * b;
        kernels_->winograd_weights(args);
      }
    });
  };
  transformed_ = MakePack(source, name() + ":b" + std::to_string(b), count, fill);
}

bool WinogradConv::Applicable(const Conv2dShape& s) {
  return s.kernel_h == 3 && s.kernel_w == 3 && s.stride_h == 1 && s.stride_w == 1 && s.dilation_h == 1 &&
         s.dilation_w == 1 && s.group == 1;
}

int WinogradConv::block() const { return kernels_->block; }

std::string WinogradConv::name() const { return std::string("f32_winograd_4x4_3x3_") + kernels_->isa; }

bool WinogradConv::Supports(const Conv2dShape& s, const ConvRunArgs&) const {
  return !empty() && Applicable(s) && s.in_channels == in_channels_ && s.out_channels == out_channels_;
}

void WinogradConv::Run(const Conv2dShape& s, const float* x, float* y, const ConvRunArgs& args,
                       ThreadPool* pool) const {
  const ConvKernelTable& k = *kernels_;
  const int64_t b = k.block;
  const int64_t cb_n = in_blocks_, ob_n = out_blocks_;
  const int64_t cpad = cb_n * b, mpad = ob_n * b;
  const int64_t out_plane = s.out_h * s.out_w;
  if (out_plane == 0 || s.batch == 0) return;
  const bool x_blocked = args.x_layout == ConvLayout::kNchwc, y_blocked = args.y_layout == ConvLayout::kNchwc;
  const int64_t tiles_h = (s.out_h + 3) / 4, tiles_w = (s.out_w + 3) / 4, image_tiles = tiles_h * tiles_w;
  const int threads = pool != nullptr ? pool->num_threads() : 1;

  // Chunks: even runs of an image's tiles (row-major, so a chunk may start and end mid tile
  // row). As many as the V / M budget needs; when there are at least as many as threads, a
  // multiple of the thread count, so whole chunks per thread stay balanced.
  const int64_t max_chunk_tiles = std::max<int64_t>(1, kChunkFloats / (36 * std::max(cpad, mpad)));
  int64_t chunks_per_image = std::min(image_tiles, (image_tiles + max_chunk_tiles - 1) / max_chunk_tiles);
  const bool whole_chunks = threads == 1 || s.batch * chunks_per_image >= threads;
  if (threads > 1 && whole_chunks)
    while ((s.batch * chunks_per_image) % threads != 0 && chunks_per_image < image_tiles) ++chunks_per_image;
  const int64_t chunk_tiles = (image_tiles + chunks_per_image - 1) / chunks_per_image;  // V / M tile stride
  const int64_t patch_w = 4 * tiles_w + 2;

  std::vector<float> bias(static_cast<size_t>(mpad), 0.0f);
  if (args.bias != nullptr) std::copy(args.bias, args.bias + out_channels_, bias.begin());
  const int64_t tap_offset = 0;
  const int32_t tap_index = 0;

  // A chunk's tiles [t0, t1) of image n, as runs within tile rows: tile row th, columns
  // [tw0, tw1), chunk-local index of the first.
  struct Run {
    int64_t th, tw0, tw1, local;
  };
  auto chunk_runs = [&](int64_t chunk, int64_t* n, int64_t* tiles, std::vector<Run>* runs) {
    *n = chunk / chunks_per_image;
    const int64_t c = chunk % chunks_per_image;
    const int64_t t0 = c * image_tiles / chunks_per_image, t1 = (c + 1) * image_tiles / chunks_per_image;
    *tiles = t1 - t0;
    runs->clear();
    for (int64_t t = t0; t < t1;) {
      const int64_t th = t / tiles_w, tw0 = t % tiles_w, tw1 = std::min(tiles_w, tw0 + (t1 - t));
      runs->push_back({th, tw0, tw1, t - t0});
      t += tw1 - tw0;
    }
  };

  // Phase 1: input transform of one run, channel block cb. Tiles whose 6 x 6 window lies in
  // the image read NCHWc rows in place (zero rows above and below); the others, and NCHW input,
  // go through a zero-padded blocked patch.
  auto transform = [&](const float* const* rows, int64_t tiles, int64_t local, int64_t cb, float* v) {
    WinogradInputArgs a;
    std::copy_n(rows, 6, a.rows);
    a.tiles = tiles;
    a.v = v + local * cpad + cb * b;
    a.v_xi_stride = chunk_tiles * cpad;
    a.v_tile_stride = cpad;
    k.winograd_input(a);
  };
  auto patched = [&](int64_t n, const Run& r, int64_t cb, float* v, float* patch, float* rows) {
    const int64_t c0 = cb * b, channels = std::min<int64_t>(b, in_channels_ - c0);
    const int64_t pw = 4 * (r.tw1 - r.tw0) + 2, col0 = 4 * r.tw0 - s.pad_left;  // input column of patch column 0
    const int64_t lo = std::clamp<int64_t>(-col0, 0, pw), hi = std::clamp<int64_t>(s.in_w - col0, 0, pw);
    const float* row_ptrs[6];
    for (int64_t i = 0; i < 6; ++i) {
      const int64_t ih = r.th * 4 - s.pad_top + i;
      float* prow = patch + i * pw * b;
      row_ptrs[i] = prow;
      if (ih < 0 || ih >= s.in_h) {
        std::fill(prow, prow + pw * b, 0.0f);
        continue;
      }
      if (x_blocked) {
        const float* src = x + ((n * cb_n + cb) * s.in_h + ih) * s.in_w * b;
        std::fill(prow, prow + lo * b, 0.0f);
        if (hi > lo) std::memcpy(prow + lo * b, src + (col0 + lo) * b, static_cast<size_t>((hi - lo) * b) * 4);
        std::fill(prow + std::max(lo, hi) * b, prow + pw * b, 0.0f);
      } else {
        for (int64_t c = 0; c < channels; ++c) {
          const float* src = x + ((n * in_channels_ + c0 + c) * s.in_h + ih) * s.in_w;
          float* dst = rows + c * pw;
          std::fill(dst, dst + lo, 0.0f);
          if (hi > lo) std::memcpy(dst + lo, src + col0 + lo, static_cast<size_t>(hi - lo) * 4);
          std::fill(dst + std::max(lo, hi), dst + pw, 0.0f);
        }
        k.block_rows(rows, pw, channels, pw, prow);
      }
    }
    transform(row_ptrs, r.tw1 - r.tw0, r.local, cb, v);
  };
  // Tiles tw with 0 <= 4 tw - pad_left and 4 tw - pad_left + 6 <= in_w.
  const int64_t inner0 = (s.pad_left + 3) / 4;
  const int64_t inner1 = s.in_w + s.pad_left >= 6 ? (s.in_w + s.pad_left - 6) / 4 + 1 : 0;
  auto input_transform = [&](int64_t n, const Run& r, int64_t cb, float* v, float* patch, float* rows,
                             const float* zeros) {
    const int64_t ta = std::max(r.tw0, inner0), tb = std::min(r.tw1, inner1);
    if (!x_blocked || ta >= tb) return patched(n, r, cb, v, patch, rows);
    if (r.tw0 < ta) patched(n, {r.th, r.tw0, ta, r.local}, cb, v, patch, rows);
    const float* row_ptrs[6];
    for (int64_t i = 0; i < 6; ++i) {
      const int64_t ih = r.th * 4 - s.pad_top + i;
      row_ptrs[i] = ih < 0 || ih >= s.in_h ? zeros
                                           : x + (((n * cb_n + cb) * s.in_h + ih) * s.in_w + 4 * ta - s.pad_left) * b;
    }
    transform(row_ptrs, tb - ta, r.local + ta - r.tw0, cb, v);
    if (tb < r.tw1) patched(n, {r.th, tb, r.tw1, r.local + tb - r.tw0}, cb, v, patch, rows);
  };

  // Phase 2: M[xi][ob .. ob + fb) for tiles [0, tiles).
  const int64_t fb_chunks = (ob_n + k.max_filter_blocks - 1) / k.max_filter_blocks;
  const int64_t fb_per = (ob_n + fb_chunks - 1) / fb_chunks;
  const int64_t k_blocks = std::clamp<int64_t>((24 << 10) / (fb_per * b * b * 4), 1, cb_n);
  auto product = [&](int64_t xi, int64_t ob0, int64_t tiles, const float* v, float* m) {
    const int fb = static_cast<int>(std::min(fb_per, ob_n - ob0));
    DirectTileArgs a;
    a.x = v + xi * chunk_tiles * cpad;
    a.x_pixel_stride = cpad;
    a.x_channel_stride = 1;
    a.x_block_stride = b;
    a.in_blocks = cb_n;
    a.last_block_channels = in_channels_ - (cb_n - 1) * b;
    a.tap_offsets = &tap_offset;
    a.tap_index = &tap_index;
    a.taps = 1;
    a.kernel_taps = 1;
    a.w = transformed_.data() + (xi * ob_n + ob0) * cb_n * b * b;
    a.w_fb_stride = cb_n * b * b;
    a.y_pixel_stride = b;
    a.y_fb_stride = chunk_tiles * b;
    const float* x0 = a.x;
    const float* w0 = a.w;
    for (int64_t cb0 = 0; cb0 < cb_n; cb0 += k_blocks) {  // input channel chunks, weights in L1
      const int64_t cbn = std::min(k_blocks, cb_n - cb0);
      a.x = x0 + cb0 * b;
      a.w = w0 + cb0 * b * b;
      a.in_blocks = cbn;
      a.last_block_channels = cb0 + cbn == cb_n ? in_channels_ - (cb_n - 1) * b : b;
      a.accumulate = cb0 > 0;
      const int64_t max_px = k.max_pixels[fb], parts = (tiles + max_px - 1) / max_px;
      for (int64_t t = 0, part = 0; t < tiles; ++part) {  // even tile widths
        const int px = static_cast<int>((tiles - t + (parts - part) - 1) / (parts - part));
        a.x_base = t * cpad;
        a.y = m + ((xi * ob_n + ob0) * chunk_tiles + t) * b;
        k.direct_tile(a, fb, px);
        t += px;
      }
    }
  };

  // Phase 3: output transform of one run, output block ob. NCHWc output is written in place
  // with the whole epilogue; NCHW goes through a blocked strip of 4 rows that is transposed.
  auto output_transform = [&](int64_t n, const Run& r, int64_t ob, const float* m, float* strip) {
    WinogradOutputArgs a;
    a.m = m + (ob * chunk_tiles + r.local) * b;
    a.m_xi_stride = ob_n * chunk_tiles * b;
    a.tiles = r.tw1 - r.tw0;
    a.bias = bias.data() + ob * b;
    a.rows = std::min<int64_t>(4, s.out_h - 4 * r.th);
    a.cols = std::min(4 * r.tw1, s.out_w) - 4 * r.tw0;
    if (y_blocked) {
      const int64_t off = (((n * ob_n + ob) * s.out_h + 4 * r.th) * s.out_w + 4 * r.tw0) * b;
      a.out = y + off;
      a.out_row_stride = s.out_w * b;
      a.residual = args.residual != nullptr ? args.residual + off : nullptr;
      a.act = &args.activation;
      k.winograd_output(a);
      return;
    }
    a.out = strip;
    a.out_row_stride = a.cols * b;
    k.winograd_output(a);
    const int64_t m0 = ob * b, channels = std::min<int64_t>(b, out_channels_ - m0);
    for (int64_t i = 0; i < a.rows; ++i) {
      const int64_t off = (n * out_channels_ + m0) * out_plane + (4 * r.th + i) * s.out_w + 4 * r.tw0;
      k.unblock(strip + i * a.out_row_stride, a.cols, channels, y + off, out_plane,
                args.residual != nullptr ? args.residual + off : nullptr, out_plane, &args.activation);
    }
  };

  const int64_t total_chunks = s.batch * chunks_per_image;
  const double flops_per_tile = 36.0 * 2.0 * static_cast<double>(cpad * mpad);
  const size_t v_floats = static_cast<size_t>(36 * chunk_tiles * cpad), m_floats = static_cast<size_t>(36 * chunk_tiles * mpad);
  const size_t patch_floats = static_cast<size_t>(6 * patch_w * b), rows_floats = static_cast<size_t>(b * patch_w);
  const size_t strip_floats = static_cast<size_t>(4 * 4 * tiles_w * b);
  const size_t zeros_floats = x_blocked ? static_cast<size_t>(patch_w * b) : 0;  // a padding row

  if (whole_chunks) {
    ThreadPool::For(pool, total_chunks, flops_per_tile * static_cast<double>(chunk_tiles), [&](int64_t begin, int64_t end) {
      const auto v = Scratch(kV, v_floats), m = Scratch(kM, m_floats), patch = Scratch(kPatch, patch_floats);
      const auto rows = Scratch(kRows, rows_floats), strip = Scratch(kStrip, strip_floats);
      const auto zeros = Zeros(kZeros, zeros_floats);
      std::vector<Run> runs;
      for (int64_t chunk = begin; chunk < end; ++chunk) {
        int64_t n, tiles;
        chunk_runs(chunk, &n, &tiles, &runs);
        for (const Run& r : runs)
          for (int64_t cb = 0; cb < cb_n; ++cb)
            input_transform(n, r, cb, v->get(), patch->get(), rows->get(), zeros->get());
        for (int64_t xi = 0; xi < 36; ++xi)
          for (int64_t ob0 = 0; ob0 < ob_n; ob0 += fb_per) product(xi, ob0, tiles, v->get(), m->get());
        for (const Run& r : runs)
          for (int64_t ob = 0; ob < ob_n; ++ob) output_transform(n, r, ob, m->get(), strip->get());
      }
    });
    return;
  }

  // Fewer chunks than threads: each phase in parallel.
  const auto v = Scratch(kV, v_floats), m = Scratch(kM, m_floats), zeros = Zeros(kZeros, zeros_floats);
  std::vector<Run> runs;
  for (int64_t chunk = 0; chunk < total_chunks; ++chunk) {
    int64_t n, tiles;
    chunk_runs(chunk, &n, &tiles, &runs);
    const int64_t nr = static_cast<int64_t>(runs.size());
    ThreadPool::For(pool, nr * cb_n, static_cast<double>(tiles_w * b * 200), [&](int64_t begin, int64_t end) {
      const auto patch = Scratch(kPatch, patch_floats), rows = Scratch(kRows, rows_floats);
      for (int64_t i = begin; i < end; ++i)
        input_transform(n, runs[i / cb_n], i % cb_n, v->get(), patch->get(), rows->get(), zeros->get());
    });
    ThreadPool::For(pool, 36 * fb_chunks, 2.0 * static_cast<double>(tiles * cpad * fb_per * b),
                    [&](int64_t begin, int64_t end) {
                      for (int64_t i = begin; i < end; ++i) product(i / fb_chunks, (i % fb_chunks) * fb_per, tiles, v->get(), m->get());
                    });
    ThreadPool::For(pool, nr * ob_n, static_cast<double>(tiles_w * b * 150), [&](int64_t begin, int64_t end) {
      const auto strip = Scratch(kStrip, strip_floats);
      for (int64_t i = begin; i < end; ++i) output_transform(n, runs[i / ob_n], i % ob_n, m->get(), strip->get());
    });
  }
}

}  // namespace onyx::linalg
