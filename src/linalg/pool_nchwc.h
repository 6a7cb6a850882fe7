// Pooling and per-channel scaling on channel-blocked (NCHWc) activations, graph-free: x is [N, ceil(C / B), H, W, B]
// and y [N, ceil(C / B), OH, OW, B] (global pools: OH = OW = 1), B the block of the NCHWc
// tensors (ConvBlockSize() of the convolution engines that made them). Every pixel is B
// consecutive channels, so a window is a sum or max of whole vectors, with no shuffles.
// The microkernels follow the convolution ISA (ForceConvIsa / ONYX_CONV_ISA): its vector
// width is the block; a block the selected ISA's vectors do not divide runs the scalar kernels.
// Padded channels (past C) pool like real ones: zeros in give zeros out. Max pools skip a NaN
// tap unless it comes first, as MaxPool's NCHW kernel does (GlobalMaxPool's NCHW kernel
// propagates every NaN instead).
#pragma once

#include <cstdint>
#include <string>

namespace onyx {
class ThreadPool;
}

namespace onyx::linalg {

enum class NchwcPoolKind {
  kMax,                   // lowest float when no tap lies inside the input
  kAverage,               // over the taps inside the input (NaN when there are none)
  kAverageIncludePadding  // over the taps inside the padded extent (count_include_pad)
};

// One 2-D pooling's sizes, over the plain channel count `channels`.
struct NchwcPool2dShape {
  int64_t batch = 1, channels = 0, in_h = 1, in_w = 1, out_h = 1, out_w = 1;
  int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
};

void NchwcPool2d(NchwcPoolKind kind, const NchwcPool2dShape& s, int block, const float* x, float* y,
                 ThreadPool* pool);

// Global average (max = false) or max pooling of `pixels` pixels per image.
void NchwcGlobalPool(bool max, int64_t batch, int64_t channels, int64_t pixels, int block, const float* x, float* y,
                     ThreadPool* pool);

// y = x * scale per channel: x and y [N, ceil(C / B), pixels, B], scale [N, ceil(C / B), B] (a
// squeeze-excitation block's gate). y may be x.
void NchwcScaleChannels(int64_t batch, int64_t channels, int64_t pixels, int block, const float* x, const float* scale,
                        float* y, ThreadPool* pool);

// The ISA whose microkernels run a block of this size now ("avx512", "avx2", "scalar").
std::string NchwcPoolIsa(int block);

// Microkernels of one ISA (f32_pool_nchwc_<isa>.cc). A window kernel pools the taps
// x[r * row_step + k * col_step + lane] (r < rows, k < cols) for lanes [0, block) into y,
// averages scaled by `scale`; a global kernel pools `pixels` consecutive pixels of `block` lanes;
// scale_pixels multiplies `pixels` pixels by one vector of `block` lanes.
struct NchwcPoolKernels {
  const char* isa;
  int lanes;
  void (*max_window)(const float* x, int64_t block, int64_t rows, int64_t row_step, int64_t cols, int64_t col_step,
                     float scale, float* y);
  void (*sum_window)(const float* x, int64_t block, int64_t rows, int64_t row_step, int64_t cols, int64_t col_step,
                     float scale, float* y);
  void (*global_max)(const float* x, int64_t pixels, int64_t block, float scale, float* y);
  void (*global_sum)(const float* x, int64_t pixels, int64_t block, float scale, float* y);
  void (*scale_pixels)(const float* x, int64_t pixels, int64_t block, const float* scale, float* y);
};

extern const NchwcPoolKernels kF32PoolNchwcScalar;
#if defined(__x86_64__)
extern const NchwcPoolKernels kF32PoolNchwcAvx2;
extern const NchwcPoolKernels kF32PoolNchwcAvx512;
#endif

}  // namespace onyx::linalg
