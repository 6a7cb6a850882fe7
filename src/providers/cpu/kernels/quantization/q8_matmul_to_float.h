// The int8 GEMM path of com.microsoft MatMulIntegerToFloat and DynamicQuantizeMatMul when B is a
// constant 2-D matrix (the usual dynamically quantized Linear layer): B is packed once with its
// zero point, A (quantized here first for DynamicQuantizeMatMul, with the vectorized loops of
// DynamicQuantizeLinear) runs as one [rows, K] matrix, and the scales and bias are applied in
// the GEMM's output stage.
#pragma once

#include "linalg/q8_gemm.h"

namespace onyx {

class KernelContext;
class KernelInfo;
class Tensor;

// B (input b_index) and its zero point (zp_index) packed when both are constant, B is 2-D
// uint8/int8 and the zero point one value or one per column; empty otherwise.
linalg::PackedQ8B PackConstantQ8B(const KernelInfo& info, size_t b_index, size_t zp_index);

// Y[..., N] = (A - a_zero) x packed B * (a_scale * b_scale[n]) + bias[n]. A: uint8/int8 codes
// [..., K] (quantized = false) or float (quantized = true: DynamicQuantizeMatMul's per-tensor
// uint8 quantization first; a_scale and a_zero are then ignored). b_scale: 1 or N floats;
// bias: null or N floats. Fails with a clear message on mismatched shapes.
void Q8MatMulToFloat(KernelContext& ctx, const Tensor& a, bool quantize_a, float a_scale, int32_t a_zero,
                     const linalg::PackedQ8B& b, const Tensor& b_scale, const Tensor* bias);

}  // namespace onyx
