// A dynamically quantized conv's output handed on as DynamicQuantizeLinear's codes instead of
// float (com.onyx DynamicQuantizeConv's Y_codes output): the next DynamicQuantizeConv reads the
// codes and skips the quantization of its input, and the float output never goes to memory.
// Also the float stage's fused SiLU, run on pieces of a pointwise conv's output while in cache.
#pragma once

#include <cstdint>
#include <mutex>

#include "linalg/q8_gemm.h"
#include "providers/cpu/kernels/quantization/quant_common.h"
#include "providers/cpu/kernels/quantization/quant_conv_geometry.h"
#include "providers/cpu/kernels/quantization/quant_conv_weights.h"

namespace onyx {
class ThreadPool;
namespace quant_conv {

// DynamicQuantizeConv's float stage per output channel: float(acc) * mult[c], + bias[c] (bias
// null: none), then clamped to [lo, hi] (q8_to_float.h's operations); with silu, then v times
// Sigmoid(v) as Onyx's Sigmoid kernel computes it in a quantized graph (ONNX Runtime's logistic,
// linalg::VecSigmoidAsOnnxRuntime) and Mul.
// With a residual z (Y's shape), v + z comes before the clamp (and the SiLU): Add's rounding.
struct DynamicFloatStage {
  const float* mult = nullptr;
  const float* bias = nullptr;
  float lo = 0.0f, hi = 0.0f;
  bool silu = false;
  const float* z = nullptr;
  // Whether PostStage has work: what the conv's own float epilogue cannot do.
  bool HasPost() const { return silu || z != nullptr; }
  // The part the conv's float epilogue runs: all of it, or without the clamp when a residual
  // comes first.
  DynamicFloatStage Pre() const;
};

// The Q8GemmW / ConvNchw output that runs `stage`'s float epilogue (per-channel mult, bias, the
// clamp) into c: kFloat, or kFloatCodes with code_scale and zero_point still to set.
linalg::Q8Output StageOutput(const DynamicFloatStage& stage, linalg::Q8Output::Kind kind, void* c, int64_t ldc);

// Y's range [min(0, Y), max(0, Y)] that the pool's tasks widen, each merging its own under a
// lock; a null range takes nothing.
class SharedRange {
 public:
  explicit SharedRange(float* range) : range_(range) {}
  bool wanted() const { return range_ != nullptr; }
  // A task's range [lo, hi].
  void Merge(const float r[2]);
  // linalg::Q8MinMax of v[0, n).
  void Add(const float* v, int64_t n);

 private:
  float* range_;
  std::mutex mutex_;
};

// The rest of the stage over Y's values [offset, offset + n) in v, in place: + z[offset + i],
// then the clamp (with a residual), then the SiLU.
void PostStage(const DynamicFloatStage& stage, float* v, int64_t offset, int64_t n);

// v[i] = v[i] * VecSigmoidAsOnnxRuntime(v[i]): a fused SiLU (Sigmoid then Mul), bit for bit the
// two nodes' in a quantized graph.
void SiluInPlace(float* v, int64_t n);

// Whether ConvToCodesInPieces takes this conv: an output past L2's size (1 MB) of a group-1
// pointwise conv on the weight-stationary GEMM.
bool CodesInPieces(const ConvGeometry& g, const QuantWeights& w);

// The conv over X's codes (uint8, zero point x_zp) computed twice in pieces that stay in cache:
// first for Y's range (min(0, Y), max(0, Y), NaNs skipped) into range, then again to quantize
// each piece with that range's DynamicQuantParams into codes (Y's shape, uint8). The float
// values are those the whole-tensor paths write (the same kernels per element), so the codes
// equal DynamicQuantizeLinear over that float output.
void ConvToCodesInPieces(const ConvGeometry& g, const uint8_t* x, uint8_t x_zp, const QuantWeights& w,
                         const DynamicFloatStage& stage, float range[2], uint8_t* codes, ThreadPool* pool);

// Y's codes with Y computed once into y (a buffer of Y's size) and its range into range, in one
// parallel loop of two phases: each task computes its runs of output channels of Y and their
// range (merged once per task), then, when every part is computed, quantizes the same runs while
// they are in its core's cache (before: the conv's loop, then a second loop split its own way,
// which read about half of Y from the other core at 2 threads; a depthwise conv also merged its
// range under a lock every 8 channels). A group-1 pointwise conv on the weight-stationary GEMM
// (runs of 8-row panels of W, Q8GemmWRows) or a 2-D depthwise conv, without a post stage; false
// (nothing done) for other convs. The values and codes are those of the whole-tensor paths.
bool ConvToCodesOnce(const ConvGeometry& g, const uint8_t* x, uint8_t x_zp, const QuantWeights& w,
                     const DynamicFloatStage& stage, float range[2], float* y, uint8_t* codes, ThreadPool* pool);

// A pointwise conv with a PostStage (a SiLU or a residual; group 1, on the weight-stationary
// GEMM, whose epilogue has neither) into float y, a piece of pixels at a time so that the post
// stage runs while the piece is in cache instead of in a second pass over y; Y's range after it
// into range when not null. False (nothing done) where the conv is not such.
bool PointwisePostInPieces(const ConvGeometry& g, const uint8_t* x, uint8_t x_zp, const QuantWeights& w,
                           const DynamicFloatStage& stage, float* range, float* y, ThreadPool* pool);

}  // namespace quant_conv
}  // namespace onyx
