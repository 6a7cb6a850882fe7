// The int8 convolutions' prepared weights (QuantWeights): packed for the weight-stationary GEMM
// (NCHW), the channels-last direct kernel or the int8 GEMM, or, depthwise, minus their zero
// points; prepared once at session creation when constant, else per call.
#pragma once

#include <cstdint>
#include <vector>

#include "linalg/q8_conv_nhwc.h"
#include "linalg/q8_dwconv_nhwc.h"
#include "linalg/q8_gemm.h"
#include "onyx/tensor.h"
#include "providers/kernel.h"

namespace onyx {
class ThreadPool;
namespace quant_conv {

// The prepared weights: for a 2-D or 1-D convolution where the int8 GEMM has the weight-stationary
// kernel (q8_gemm.h's Q8GemmW, AVX-512 VNNI), one packed W_group [M/group, C/group * kernel] per
// group, run over the NCHW image (pointwise) or its implicit im2col (q8_conv_w.h); otherwise one packed int8
// GEMM operand per group (B = W_group^T, [C/group * kernel, M/group], zero points per output
// channel) run over channels-last rows; for a depthwise convolution (one input and one output
// channel per group) the weights minus their zero points.
struct QuantWeights {
  std::vector<linalg::PackedQ8W> nchw;
  std::vector<linalg::PackedQ8B> groups;
  std::vector<int32_t> depthwise;  // [M, kernel]
  linalg::PackedQ8Nhwc direct;     // channels_last, symmetric weights, AVX-512 VNNI (q8_conv_nhwc.h)
  linalg::PackedQ8DepthwiseNhwc depthwise_nhwc;  // channels_last depthwise (q8_dwconv_nhwc.h)
  bool empty() const {
    return nchw.empty() && groups.empty() && depthwise.empty() && direct.empty() && depthwise_nhwc.empty();
  }
};

bool IsDepthwise(int64_t channels, int64_t out_channels, int64_t group);

// channels_last: the direct kernel's or the GEMM operand (ConvNhwc's B), group 1; or depthwise
// (depthwise_nhwc, empty where a weight minus its zero point leaves int8). memory: where the
// large packs go (the session's placement, linalg_kernels::PackMemoryFor; null: fresh memory).
QuantWeights PrepareWeights(const Tensor& w, const std::vector<int64_t>& w_zp, int64_t group, ThreadPool* pool,
                            bool channels_last = false, const linalg::PackMemory* memory = nullptr);

// Prepared at session creation when w and its zero point are constants.
QuantWeights PrepackWeights(const KernelInfo& info, size_t w_index, size_t zp_index, int64_t group,
                            bool channels_last = false);

// The weights for this call: the prepared ones, or prepared now from a non-constant w.
const QuantWeights& WeightsFor(const QuantWeights& prepared, const Tensor& w, const Tensor* w_zp, int64_t group,
                               ThreadPool* pool, QuantWeights& scratch, bool channels_last = false);

}  // namespace quant_conv
}  // namespace onyx
