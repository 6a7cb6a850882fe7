// NCHWc pooling: the microkernel selection and the loops over window positions. Each output
// pixel's window is clipped to the input once per row and column (tables per run), so the
// microkernels see only taps inside the input.
#include "linalg/pool_nchwc.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "base/int_math.h"
#include "linalg/conv.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {
namespace {

// A squeeze-excitation gate's plane is cut into at most this many pixel runs of at least
// kScaleMinRunPixels (a 112x112 plane: 8 runs of 1568 pixels, 100 KB at 16 channels).
constexpr int64_t kScaleRunsPerPlane = 8, kScaleMinRunPixels = 256;

constexpr const NchwcPoolKernels* kChain[] = {
#if defined(__x86_64__)
    &kF32PoolNchwcAvx512,
    &kF32PoolNchwcAvx2,
#endif
    &kF32PoolNchwcScalar,
};

// The convolution ISA's kernels when their vectors tile the block (the ISA is one this CPU has:
// ForceConvIsa accepts no other).
const NchwcPoolKernels& KernelsFor(int block) {
  const std::string isa = ConvIsa();
  for (const NchwcPoolKernels* k : kChain)
    if (isa == k->isa && block % k->lanes == 0) return *k;
  return kF32PoolNchwcScalar;
}

// One dim's windows: the first tap (may lie in the padding), the kernel offsets [lo, hi) that
// read the input, and how many lie inside the padded extent (count_include_pad's divisor).
struct DimWindows {
  std::vector<int64_t> start, lo, hi, padded;
};

DimWindows MakeWindows(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_begin,
                       int64_t pad_end) {
  DimWindows w;
  for (int64_t o = 0; o < out; ++o) {
    const int64_t start = o * stride - pad_begin;
    const int64_t lo = start < 0 ? std::min(kernel, CeilDiv(-start, dilation)) : 0;
    w.start.push_back(start);
    w.lo.push_back(lo);
    w.hi.push_back(std::clamp<int64_t>(CeilDiv(in - start, dilation), lo, kernel));
    w.padded.push_back(std::clamp<int64_t>(CeilDiv(in + pad_end - start, dilation), 0, kernel));
  }
  return w;
}

}  // namespace

std::string NchwcPoolIsa(int block) { return KernelsFor(block).isa; }

void NchwcPool2d(NchwcPoolKind kind, const NchwcPool2dShape& s, int block, const float* x, float* y,
                 ThreadPool* pool) {
  const NchwcPoolKernels& k = KernelsFor(block);
  auto* window = kind == NchwcPoolKind::kMax ? k.max_window : k.sum_window;
  const int64_t planes = s.batch * ((s.channels + block - 1) / block);
  if (planes == 0 || s.out_h == 0 || s.out_w == 0) return;
  const DimWindows rows = MakeWindows(s.in_h, s.out_h, s.kernel_h, s.stride_h, s.dilation_h, s.pad_top, s.pad_bottom);
  const DimWindows cols = MakeWindows(s.in_w, s.out_w, s.kernel_w, s.stride_w, s.dilation_w, s.pad_left, s.pad_right);
  const int64_t in_plane = s.in_h * s.in_w * block, out_row = s.out_w * block;
  const int64_t row_step = s.dilation_h * s.in_w * block, col_step = s.dilation_w * block;
  const double cost = static_cast<double>(s.out_w * s.kernel_h * s.kernel_w * block);
  ThreadPool::For(pool, planes * s.out_h, cost, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t plane = i / s.out_h, oh = i % s.out_h;
      const int64_t nr = rows.hi[oh] - rows.lo[oh];
      const int64_t ih = rows.start[oh] + rows.lo[oh] * s.dilation_h;
      const float* xp = x + plane * in_plane;
      float* yr = y + i * out_row;
      for (int64_t ow = 0; ow < s.out_w; ++ow) {
        const int64_t nc = cols.hi[ow] - cols.lo[ow];
        const int64_t iw = cols.start[ow] + cols.lo[ow] * s.dilation_w;
        const int64_t count = kind == NchwcPoolKind::kAverageIncludePadding ? rows.padded[oh] * cols.padded[ow] : nr * nc;
        const float scale = count > 0 ? 1.0f / static_cast<float>(count) : std::numeric_limits<float>::quiet_NaN();
        // No tap inside: the kernel reads nothing, so any address does.
        const float* first = nr > 0 && nc > 0 ? xp + (ih * s.in_w + iw) * block : xp;
        window(first, block, nc > 0 ? nr : 0, row_step, nc, col_step, scale, yr + ow * block);
      }
    }
  });
}

void NchwcGlobalPool(bool max, int64_t batch, int64_t channels, int64_t pixels, int block, const float* x, float* y,
                     ThreadPool* pool) {
  const NchwcPoolKernels& k = KernelsFor(block);
  auto* global = max ? k.global_max : k.global_sum;
  const int64_t planes = batch * ((channels + block - 1) / block);
  const float scale = pixels > 0 ? 1.0f / static_cast<float>(pixels) : std::numeric_limits<float>::quiet_NaN();
  ThreadPool::For(pool, planes, static_cast<double>(pixels * block), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) global(x + i * pixels * block, pixels, block, scale, y + i * block);
  });
}

void NchwcScaleChannels(int64_t batch, int64_t channels, int64_t pixels, int block, const float* x, const float* scale,
                        float* y, ThreadPool* pool) {
  const NchwcPoolKernels& k = KernelsFor(block);
  const int64_t planes = batch * ((channels + block - 1) / block);
  if (planes == 0 || pixels == 0) return;
  // Pixel runs of each plane are the items: an early gate has 1-3 blocks of a big map, which
  // whole planes would share badly among threads (3 on 2: 2 against 1). The run length does
  // not depend on the thread count, and each output is one product either way.
  const int64_t runs = std::max<int64_t>(1, std::min<int64_t>(kScaleRunsPerPlane, pixels / kScaleMinRunPixels));
  ThreadPool::For(pool, planes * runs, static_cast<double>(pixels / runs * block), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t plane = i / runs, r = i % runs;
      const int64_t p0 = r * pixels / runs, p1 = (r + 1) * pixels / runs;
      const int64_t off = (plane * pixels + p0) * block;
      k.scale_pixels(x + off, p1 - p0, block, scale + plane * block, y + off);
    }
  });
}

}  // namespace onyx::linalg
