// Single-precision 2-D convolution engines (1-D is H = 1), graph-free:
//   GemmConv       GEMMs on the packed SGEMM (pointwise: the input as is; else im2col tiles).
//   DirectConv     direct convolution on output channels blocked by the SIMD width (NCHWc
//                  weights), any kernel / stride / dilation / padding / group; reads NCHW or
//                  NCHWc input and writes NCHW or NCHWc output.
//   DepthwiseConv  group == C convolutions (channel multiplier m: M = m * C), vectorized over the
//                  output width in NCHW (or over channels in NCHWc).
//   WinogradConv   F(4x4, 3x3) for 3x3, stride 1, dilation 1, group 1 convolutions.
// Every engine packs or transforms its weights once, when it is made, with the ISA variant
// selected then (best first: avx512, avx2, scalar; ForceConvIsa / ONYX_CONV_ISA pick another),
// and applies bias, residual add and activation to each output tile while it is hot:
//   y = activation(conv(x, w) + bias[m] + residual)
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "linalg/conv_scratch.h"
#include "linalg/gemm.h"

namespace onyx {
class ThreadPool;
}

namespace onyx::linalg {

struct ConvActivation {
  enum Kind {
    kNone,
    kRelu,
    kClip,         // min(max(v, alpha), beta)
    kLeakyRelu,    // v < 0 ? alpha * v : v
    kHardSigmoid,  // max(0, min(1, alpha * v + beta))
    kSigmoid,
    kTanh,
    kSilu,       // v * sigmoid(v)
    kHardSwish,  // v * max(0, min(1, v / 6 + 1 / 2))
  };
  Kind kind = kNone;
  float alpha = 0.0f;
  float beta = 0.0f;
};

// The activation of one value, in plain C++ (the reference the vector forms are tested against).
float ActivateScalar(float v, const ConvActivation& act);

// One convolution's sizes. Weights are [out_channels, in_channels / group, kernel_h, kernel_w].
struct Conv2dShape {
  int64_t batch = 1, in_channels = 0, in_h = 1, in_w = 0;
  int64_t out_channels = 0, group = 1;
  int64_t kernel_h = 1, kernel_w = 1;
  int64_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t out_h = 0, out_w = 0;

  // Fills out_h / out_w from the rest; false when the window does not fit the padded input.
  bool ComputeOutputSize();
  bool IsDepthwise() const { return group == in_channels && group > 1 && out_channels % group == 0; }
  bool IsPointwise() const;
};

// Memory layout of an activation tensor. NCHWc is [N, ceil(C / B), H, W, B] with B =
// ConvBlockSize() of the engine's ISA; channels past C in the last block are zero on input and
// unspecified on output.
enum class ConvLayout { kNchw, kNchwc };

// The plain loop nest every engine is tested against (NCHW in and out, double accumulation).
void ConvReference(const Conv2dShape& s, const float* x, const float* w, const float* bias, const float* residual,
                   const ConvActivation& act, float* y);

// ISA selection for the convolution kernels: "avx512", "avx2", "scalar"; "" or "auto" restores
// the best. False (nothing changes) for an unknown ISA or one this CPU lacks. Engines keep the
// ISA they were made with. ONYX_CONV_ISA (else ONYX_LINALG_ISA) sets the initial choice.
bool ForceConvIsa(std::string_view isa);
std::string ConvIsa();
std::vector<std::string> SupportedConvIsas();
// Channel block (SIMD width in floats) of the selected ISA: the B of NCHWc.
int ConvBlockSize();

// Which engine runs a float convolution: one rule, here, called by the Conv and NchwcConv
// kernels when they prepare their weights and by onyx explain to name the engine without
// running it.
enum class ConvAlgorithm { kAuto, kDirect, kGemm, kWinograd, kDepthwise };

// Winograd pays for its transforms from about this many channels on (measured on ResNet-50,
// YOLO and PP-OCR shapes).
constexpr int64_t kConvWinogradMinChannels = 16;
// Outputs of at most this many pixels per channel run as im2col GEMMs: the direct tiles get too
// few pixels per weight load there (a 7x7 map).
constexpr int64_t kConvGemmMaxOutputPixels = 64;
// NchwcConv: wide 3x3 layers on maps of at most 49 output pixels run direct instead of Winograd
// (ResNet-50's last stage): each of the 36 * C * M transformed weights serves only 4 tiles, and
// with C * M >= 2^17 the product streams them from memory.
constexpr int64_t kNchwcWinogradMaxDirectPlane = 49;
constexpr int64_t kNchwcWinogradMinDirectWeights = int64_t{1} << 17;

struct ConvChoice {
  ConvAlgorithm algorithm = ConvAlgorithm::kDirect;
  const char* why = "";  // the branch of the rule that decided (static text)
};

// ONYX_CONV_ALGO=direct|gemm|winograd|depthwise (tests, benchmarks); kAuto when unset.
ConvAlgorithm ConvAlgorithmFromEnvironment();

// The NCHW Conv kernel's engine, from what the weight and attributes fix (only the weight
// fields of `w` are read) and the output pixels per channel when shape inference knows them
// (out_plane > 0, else -1). exact: the node sits between DequantizeLinear and QuantizeLinear,
// where Winograd's rounding would flip quantized results. forced: a requested engine, taken
// where it applies.
ConvChoice ChooseConvAlgorithm(ConvAlgorithm forced, const Conv2dShape& w, bool exact, int64_t out_plane = -1);

// The engine NchwcConv prepares for its weight (plain_input: it reads NCHW, always direct).
ConvChoice ChooseNchwcAlgorithm(const Conv2dShape& w, bool plain_input, bool exact);
// Whether an NchwcConv prepared for Winograd runs this call direct instead (small output map,
// many weights; `s` is the call's full shape).
bool NchwcRunsDirectForSmallPlane(const Conv2dShape& s);

// "winograd F(4x4,3x3)", "direct NCHWc", "gemm 1x1" (pointwise: the packed SGEMM on the input
// as is), "gemm im2col", "depthwise": static text naming an engine for a shape.
const char* ConvAlgorithmName(ConvAlgorithm algorithm, const Conv2dShape& w);
// The selected ISA's name with static storage ("avx512", "avx2", "scalar").
const char* ConvIsaName();

// NCHW <-> NCHWc reorders for `batch` images of `channels` x `pixels` with block size `block`
// (ConvBlockSize() of the engine that consumes or produced them).
void ReorderToNchwc(const float* x, int64_t batch, int64_t channels, int64_t pixels, int block, float* y,
                    ThreadPool* pool);
void ReorderFromNchwc(const float* x, int64_t batch, int64_t channels, int64_t pixels, int block, float* y,
                      ThreadPool* pool);

// y[n][m][p] = activation(y[n][m][p] + bias[m] + residual[n][m][p]) over NCHW `y` (bias and
// residual may be null): the epilogue of convolutions computed by a plain GEMM.
void ApplyConvEpilogue(float* y, int64_t batch, int64_t channels, int64_t plane, const float* bias,
                       const float* residual, const ConvActivation& act, ThreadPool* pool);

struct ConvKernelTable;

// What Run needs besides the input and output.
struct ConvRunArgs {
  const float* bias = nullptr;      // [out_channels] or null
  const float* residual = nullptr;  // laid out as y, or null; must not overlap y
  ConvActivation activation;
  ConvLayout x_layout = ConvLayout::kNchw;
  ConvLayout y_layout = ConvLayout::kNchw;  // the residual has this layout too
};

// Convolution as GEMMs on the packed SGEMM (gemm.h): pointwise convolutions multiply the input
// directly, others go through column tiles of im2col. NCHW only.
class GemmConv {
 public:
  GemmConv() = default;
  // source (may be null): where the packs' floats come from (gemm.h's PackSource).
  GemmConv(const Conv2dShape& s, const float* w, const PackSource* source = nullptr);
  bool empty() const { return packed_.empty(); }
  std::string name() const;
  bool Supports(const Conv2dShape& s, const ConvRunArgs& args) const;
  void Run(const Conv2dShape& s, const float* x, float* y, const ConvRunArgs& args, ThreadPool* pool) const;

 private:
  int64_t out_channels_ = 0, group_ = 1, in_per_group_ = 0, kernel_h_ = 0, kernel_w_ = 0;
  std::vector<PackedA> packed_;  // per group: [M / group, C / group * kh * kw]
};

// Whether DirectConv reads a padded input that needs no blocking in place (border pixels take
// only the taps inside it) instead of copying it padded: a copy of copy_bytes, on a CPU with an
// L2 of l2_bytes (per core). See kMinRowPixelsPerBorderColumn in conv_direct.cc.
bool DirectConvReadsPaddingInPlace(const Conv2dShape& s, int64_t copy_bytes, int64_t l2_bytes);
// Kernel taps DirectConv sums per pass over a single input block of `channels` (an RGB stem),
// filter_blocks output blocks of `block` channels at a time: a pass's weights stay in L1.
int64_t DirectConvTapsPerPass(int64_t block, int64_t filter_blocks, int64_t channels, int64_t taps);

class DirectConv {
 public:
  DirectConv() = default;
  // w is [M, C / group, kernel_h, kernel_w]; only the weight-related fields of `s` are read.
  DirectConv(const Conv2dShape& s, const float* w, const PackSource* source = nullptr);
  bool empty() const { return kernels_ == nullptr; }
  int block() const;
  std::string name() const;
  // Supports s (same weights, group and kernel as when made, and NCHWc layouts only when the
  // group's channel counts are multiples of the block)?
  bool Supports(const Conv2dShape& s, const ConvRunArgs& args) const;
  void Run(const Conv2dShape& s, const float* x, float* y, const ConvRunArgs& args, ThreadPool* pool) const;
  // A 1x1 window and one group: what RunPointwiseSpan takes.
  bool IsPointwise() const { return !empty() && kernel_h_ == 1 && kernel_w_ == 1 && group_ == 1; }
  // On the calling thread, for an engine that makes the input a band at a time (a depthwise
  // fused in front): `pixels` consecutive pixels of a blocked input whose channel blocks lie
  // x_block_stride floats apart, into blocked y (and residual, laid out as y) whose blocks lie
  // y_block_stride apart. padded_bias: whole blocks, or null. Needs IsPointwise().
  void RunPointwiseSpan(const float* x, int64_t x_block_stride, int64_t pixels, float* y, int64_t y_block_stride,
                        const float* residual, const float* padded_bias, const ConvActivation& act) const;

 private:
  // The input as the tiles read it: x itself, or a zero-padded (and maybe blocked) copy.
  // bounded: x itself although s has padding: the tiles take only the taps inside the input
  // (see BorderTaps in conv_direct.cc) instead of reading a padded copy.
  struct PreparedInput {
    const float* data = nullptr;
    bool blocked = false, bounded = false;
    int64_t rows = 0, cols = 0, pad_top = 0, pad_left = 0;
    std::unique_ptr<ConvScratch> storage;  // the thread's kept buffer (see conv_scratch.h)
  };
  PreparedInput PrepareInput(const Conv2dShape& s, const float* x, ConvLayout layout, ThreadPool* pool) const;

  const ConvKernelTable* kernels_ = nullptr;
  int64_t out_channels_ = 0, group_ = 1, in_per_group_ = 0, kernel_h_ = 0, kernel_w_ = 0;
  int64_t taps_per_input_ = 1;
  int64_t out_blocks_per_group_ = 0, in_blocks_per_group_ = 0;
  // [group][out block][in block][kh * kw][B in][B out]
  AlignedFloats packed_;
};

class DepthwiseConv {
 public:
  DepthwiseConv() = default;
  // w is [M, 1, kernel_h, kernel_w] with M = multiplier * group.
  DepthwiseConv(const Conv2dShape& s, const float* w, const PackSource* source = nullptr);
  bool empty() const { return kernels_ == nullptr; }
  int block() const;
  std::string name() const;
  bool Supports(const Conv2dShape& s, const ConvRunArgs& args) const;
  void Run(const Conv2dShape& s, const float* x, float* y, const ConvRunArgs& args, ThreadPool* pool) const;
  // On the calling thread: output rows [oh0, oh1) of every channel block of one NCHWc image x,
  // into `band` (block cb at band + cb * band_block_stride, row oh0 first). Multiplier 1 only
  // (Supports with NCHWc layouts). padded_bias: whole blocks, or null. x_block_stride: floats
  // between x's channel blocks, 0 for a whole image (in_h * in_w * B).
  void RunBlockedRows(const Conv2dShape& s, const float* x, int64_t oh0, int64_t oh1, float* band,
                      int64_t band_block_stride, const float* padded_bias, const ConvActivation& act,
                      int64_t x_block_stride = 0) const;

 private:
  static bool PreferRows(const Conv2dShape& s, int64_t block);
  void RunTransposed(const Conv2dShape& s, const float* x, float* y, const ConvRunArgs& args, ThreadPool* pool) const;

  const ConvKernelTable* kernels_ = nullptr;
  int64_t channels_ = 0, out_channels_ = 0, kernel_h_ = 0, kernel_w_ = 0;
  std::vector<float> weights_;  // as given: [M][kh * kw]
  AlignedFloats blocked_;  // NCHWc form (multiplier 1): [C blocks][kh * kw][B], 64-byte aligned
};

class WinogradConv {
 public:
  WinogradConv() = default;
  // w is [M, C, 3, 3]; the transform of the weights is split across `pool` when given.
  WinogradConv(const Conv2dShape& s, const float* w, ThreadPool* pool = nullptr, const PackSource* source = nullptr);
  // 3x3, stride 1, dilation 1, group 1.
  static bool Applicable(const Conv2dShape& s);
  bool empty() const { return kernels_ == nullptr; }
  int block() const;
  std::string name() const;
  bool Supports(const Conv2dShape& s, const ConvRunArgs& args) const;
  void Run(const Conv2dShape& s, const float* x, float* y, const ConvRunArgs& args, ThreadPool* pool) const;

 private:
  const ConvKernelTable* kernels_ = nullptr;
  int64_t in_channels_ = 0, out_channels_ = 0, in_blocks_ = 0, out_blocks_ = 0;
  AlignedFloats transformed_;  // [36][out block][in block][B in][B out], 64-byte aligned
};

}  // namespace onyx::linalg
