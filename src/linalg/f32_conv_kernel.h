// The per-ISA convolution microkernels behind linalg/conv.h: one table per ISA, filled by the
// f32_conv_nchwc_*, f32_dwconv_* and f32_winograd_* files, chosen by conv_config.cc.
#pragma once

#include <cstdint>

#include "linalg/conv.h"

namespace onyx::linalg {

// One tile of the direct convolution: `pixels` output pixels (y_pixel_stride apart) times
// `filter_blocks` blocks of B output channels, over all input channels and the listed taps.
//   y[f][p] = act(bias[f] + sum_{c, t} w[f][c][t] * x[x_base + tap_offsets[t] + p * x_pixel_stride + c...]
//                 + residual[f][p])
// A direct tile sums input channel blocks in groups of at least this many products per output
// before adding them to the output (see DirectTileT).
constexpr int64_t kPartialSumTerms = 128;

struct DirectTileArgs {
  const float* x = nullptr;
  int64_t x_base = 0;          // index of pixel 0's window origin (taps add their offsets)
  int64_t x_pixel_stride = 0;  // index step between the tile's output pixels
  // Or, when set, pixel p's index offset from x_base (tiles spanning output rows).
  const int64_t* x_pixel_offsets = nullptr;
  int64_t x_channel_stride = 0, x_block_stride = 0;
  int64_t in_blocks = 0, last_block_channels = 0;  // channels in the last input block (1..B)
  const int64_t* tap_offsets = nullptr;            // input index offset of each tap taken
  const int32_t* tap_index = nullptr;              // its kernel position (kh * kw_size + kw)
  int64_t taps = 0, kernel_taps = 1;
  const float* w = nullptr;  // [filter block][in block][kernel tap][B in][B out]
  int64_t w_fb_stride = 0;
  const float* bias = nullptr;  // [filter_blocks * B] or null
  float* y = nullptr;
  int64_t y_pixel_stride = 0, y_fb_stride = 0;
  const float* residual = nullptr;  // strides as y, or null
  // Tiles of `pixels` pixels computed one after another: tile i starts i * pixels pixels on (x_base
  // + i * pixels * x_pixel_stride; y and residual + i * pixels * y_pixel_stride). More than one
  // only in the stride form (x_pixel_offsets null).
  int64_t tiles = 1;
  const ConvActivation* act = nullptr;
  // Input channels come in chunks (so a chunk's weights stay in L1): `accumulate` adds onto y
  // instead of starting from the bias; `finish` (the last chunk) applies residual and act.
  bool accumulate = false;
  bool finish = true;
};

// Depthwise convolution of one NCHW channel plane, vectorized over the output width.
struct DepthwisePlaneArgs {
  const float* x = nullptr;
  int64_t in_h = 0, in_w = 0;
  const float* w = nullptr;  // [kernel_h * kernel_w]
  float bias = 0.0f;
  const float* residual = nullptr;  // [out_h * out_w] or null
  float* y = nullptr;
  int64_t out_h = 0, out_w = 0;
  int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0;
  float* scratch = nullptr;  // DepthwisePlaneScratch floats
  const ConvActivation* act = nullptr;
};

// Padded (and, for stride_w > 1, column-phase split) copy of the input plane the depthwise
// plane kernel reads: stride_w phases of rows x cols floats, then one padded input row.
struct DepthwisePlaneLayout {
  int64_t rows = 0, cols = 0;  // cols is a multiple of the vector width
  int64_t edge_masks = 0;  // strides 1 and 2 read the input directly and keep only edge lane masks
  int64_t Floats(int64_t stride_w) const {
    return stride_w <= 2 ? edge_masks : stride_w * (rows + 1) * cols;
  }
};
inline DepthwisePlaneLayout GetDepthwisePlaneLayout(const DepthwisePlaneArgs& a, int width) {
  DepthwisePlaneLayout l;
  l.rows = (a.out_h - 1) * a.stride_h + (a.kernel_h - 1) * a.dilation_h + 1;
  const int64_t out_w_padded = (a.out_w + width - 1) / width * width;
  const int64_t cols = out_w_padded + ((a.kernel_w - 1) * a.dilation_w) / a.stride_w + 1;
  l.cols = (cols + width - 1) / width * width;
  // At most two masks (<= 32 bytes each) per output vector and kernel column, plus alignment
  // slack.
  l.edge_masks = out_w_padded / width * a.kernel_w * 16 + 8;
  return l;
}

// Depthwise convolution of one NCHWc channel block: output rows [oh_begin, oh_end).
struct DepthwiseBlockedArgs {
  const float* x = nullptr;  // [in_h][in_w][B]
  int64_t in_h = 0, in_w = 0;
  const float* w = nullptr;     // [kernel_h * kernel_w][B]
  const float* bias = nullptr;  // [B] or null
  const float* residual = nullptr;
  float* y = nullptr;  // [out_h][out_w][B]
  int64_t out_h = 0, out_w = 0, oh_begin = 0, oh_end = 0;
  int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0;
  const ConvActivation* act = nullptr;
  // The output row that y's (and residual's) first row holds: 0 for a whole image, oh_begin
  // for a band of rows computed into a buffer of its own (a depthwise fused into a pointwise).
  int64_t y_row0 = 0;
};

// Winograd F(4x4, 3x3) input transform of `tiles` tiles of one tile row for one channel
// block: tile t reads columns 4t .. 4t + 5 of the 6 input rows, each row pixel vectors
// rows[r][col * B + 0..B) (NCHWc input rows read in place, or a zero-padded patch).
struct WinogradInputArgs {
  const float* rows[6] = {};
  int64_t tiles = 0;
  float* v = nullptr;  // v[xi * v_xi_stride + t * v_tile_stride + 0..B)
  int64_t v_xi_stride = 0, v_tile_stride = 0;
};

// Output transform of `tiles` tiles for one output channel block into pixel vectors: the first
// `rows` rows and `cols` columns of the 4 x 4t strip (the rest, past the image, are dropped),
//   out[r * out_row_stride + c * B + 0..B) = act(Y + bias + residual[same index]).
struct WinogradOutputArgs {
  const float* m = nullptr;  // m[xi * m_xi_stride + t * B + 0..B)
  int64_t m_xi_stride = 0, tiles = 0;
  const float* bias = nullptr;  // [B] or null
  float* out = nullptr;
  int64_t out_row_stride = 0;
  int64_t rows = 4, cols = 0;
  const float* residual = nullptr;  // laid out as out, or null
  const ConvActivation* act = nullptr;
};

// U = G g G^T (in double, then rounded to float once) for the 3x3 filters of one block of B
// output channels (`filters` of them, B or fewer in a last block) and every input channel:
//   out[xi * xi_stride + (c / B) * B * B + (c % B) * B + m] for filter m of the block,
// w: the block's first filter [filters][in_channels][3][3].
struct WinogradWeightsArgs {
  const float* w = nullptr;
  int64_t filters = 0, in_channels = 0, xi_stride = 0;
  float* out = nullptr;
};

struct ConvKernelTable {
  const char* isa;
  int block;  // B: floats per vector
  int max_filter_blocks;
  int max_pixels[5];  // per filter-block count (index 1 .. max_filter_blocks)
  void (*direct_tile)(const DirectTileArgs& a, int filter_blocks, int pixels);
  // Pixel vectors src[p][0..B) -> rows dst[c * dst_stride + p] for c < channels, adding
  // residual[c * residual_stride + p] and applying act (either may be null).
  void (*unblock)(const float* src, int64_t pixels, int64_t channels, float* dst, int64_t dst_stride,
                  const float* residual, int64_t residual_stride, const ConvActivation* act);
  // Rows src[c * src_stride + p] (c < channels) -> pixel vectors dst[p][0..B), zero past channels.
  void (*block_rows)(const float* src, int64_t src_stride, int64_t channels, int64_t pixels, float* dst);
  // y[i] = act(y[i] + bias + residual[i]) for i < n (residual may be null).
  void (*epilogue_row)(float* y, int64_t n, float bias, const float* residual, const ConvActivation* act);
  // Pixel vectors: y[p] = act(y[p] + bias + residual[p]) (bias [B] / residual may be null).
  void (*epilogue_blocked)(float* y, int64_t pixels, const float* bias, const float* residual,
                           const ConvActivation* act);
  void (*depthwise_plane)(const DepthwisePlaneArgs& a);
  void (*depthwise_blocked)(const DepthwiseBlockedArgs& a);
  void (*winograd_input)(const WinogradInputArgs& a);
  void (*winograd_output)(const WinogradOutputArgs& a);
  void (*winograd_weights)(const WinogradWeightsArgs& a);
};

// The pieces each ISA file provides (defined in f32_conv_nchwc_<isa>.cc, f32_dwconv_<isa>.cc,
// f32_winograd_<isa>.cc) and the tables conv_config.cc assembles from them.
#define ONYX_DECLARE_CONV_ISA(ns)                                                                               \
  namespace ns {                                                                                                \
  void DirectTile(const DirectTileArgs& a, int filter_blocks, int pixels);                                      \
  void Unblock(const float* src, int64_t pixels, int64_t channels, float* dst, int64_t dst_stride,              \
               const float* residual, int64_t residual_stride, const ConvActivation* act);                      \
  void Block(const float* src, int64_t src_stride, int64_t channels, int64_t pixels, float* dst);               \
  void EpilogueRow(float* y, int64_t n, float bias, const float* residual, const ConvActivation* act);          \
  void EpilogueBlocked(float* y, int64_t pixels, const float* bias, const float* residual,                      \
                       const ConvActivation* act);                                                              \
  void DepthwisePlane(const DepthwisePlaneArgs& a);                                                             \
  void DepthwiseBlocked(const DepthwiseBlockedArgs& a);                                                         \
  void WinogradInput(const WinogradInputArgs& a);                                                               \
  void WinogradOutput(const WinogradOutputArgs& a);                                                             \
  void WinogradWeights(const WinogradWeightsArgs& a);                                                           \
  }

ONYX_DECLARE_CONV_ISA(scalar)
#if defined(__x86_64__)
ONYX_DECLARE_CONV_ISA(avx2)
ONYX_DECLARE_CONV_ISA(avx512)
#endif

// The table of the selected ISA (ForceConvIsa / ONYX_CONV_ISA, else the best supported).
const ConvKernelTable& SelectedConvKernels();

}  // namespace onyx::linalg
