// The int8 convolutions' compute paths over prepared weights: NCHW on the weight-stationary GEMM
// (ConvNchw), the depthwise loops (Depthwise2d, DepthwiseInt32), the generic im2col + int8 GEMM
// (ConvInt8, which dispatches among them) and channels-last images (ConvNhwc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "linalg/q8_conv_nhwc.h"
#include "linalg/q8_dwconv.h"
#include "linalg/q8_gemm.h"
#include "providers/cpu/kernels/quantization/quant_conv_geometry.h"
#include "providers/cpu/kernels/quantization/quant_conv_weights.h"

namespace onyx {
class ThreadPool;
namespace quant_conv {

// A 2-D (or 1-D) convolution on the weight-stationary int8 GEMM: C [M/group, pixels] is the NCHW output,
// over the image itself (pointwise) or its implicit im2col (Q8ConvW, no im2col buffer).
void ConvNchw(const ConvGeometry& g, const uint8_t* xb, bool x_signed, int32_t x_zp, const QuantWeights& w,
              const linalg::Q8Output& out, size_t out_elem_size, ThreadPool* pool);

// The linalg depthwise shape (q8_dwconv.h) of a 2-D convolution.
linalg::Q8DepthwiseShape DepthwiseShapeOf(const ConvGeometry& g);

// Depthwise2d's work for planes [p0, p1) (n * M + channel) on the calling thread.
void DepthwisePlanes(const ConvGeometry& g, const uint8_t* x, bool x_signed, int32_t x_zp, const int32_t* wc,
                     const linalg::Q8DepthwiseRequant* rq, void* out, size_t out_elem_size, int64_t p0, int64_t p1,
                     const std::function<void(int64_t, int64_t)>* finish = nullptr);

// A 2-D depthwise convolution on linalg's per-ISA loop (q8_dwconv.h), a run of channels of one
// image at a time; int32 into out, or requantized with rq (scale and bias per output channel).
// `finish` (optional, int32 output only) is called on each run of at most kFinishRun channels
// right after they are computed, while their planes are still in cache.
constexpr int64_t kFinishRun = 8;
void Depthwise2d(const ConvGeometry& g, const uint8_t* x, bool x_signed, int32_t x_zp, const int32_t* wc,
                 const linalg::Q8DepthwiseRequant* rq, void* out, size_t out_elem_size, ThreadPool* pool,
                 const std::function<void(int64_t, int64_t)>* finish = nullptr);

// The convolution through the int8 GEMM (or the depthwise loops). `out` says what to write;
// its c points at y. The 2-D depthwise path requantizes as `out` says; in other ranks the
// depthwise int32 result goes to `depthwise_acc` and the caller finishes it.
void ConvInt8(KernelContext& ctx, const ConvGeometry& g, const uint8_t* xb, bool x_signed, int32_t x_zp,
              const QuantWeights& w, const linalg::Q8Output& out, size_t out_elem_size, int32_t* depthwise_acc);

// A 2-D convolution (group 1) of channels-last images on the int8 GEMM (com.microsoft.QLinearConv,
// channels_last): rows of A are output pixels and C [pixels, M] is the channels-last output
// itself. A pointwise conv reads the image as A (K = C contiguous: nothing gathered); others
// gather im2col rows of whole C-code runs (Im2RowHwc), a tile of pixels at a time. lut: null, or
// 256 codes every output code is replaced by (com.onyx.QLinearConvSiLU's SiLU). add: null, or a
// QLinearAdd of another [pixels, M] image the output is summed with (com.onyx.QLinearConvAdd).
void ConvNhwc(const ConvGeometry& g, const uint8_t* xb, bool x_signed, int32_t x_zp, const QuantWeights& w,
              const linalg::Q8Output& out, ThreadPool* pool, const uint8_t* lut = nullptr,
              const linalg::Q8ConvAddend* add = nullptr);

}  // namespace quant_conv
}  // namespace onyx
