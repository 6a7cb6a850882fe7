// Pieces shared by the quantization kernels: integer ranges of the quantized types, whole-tensor
// loads of small parameter tensors, and a plain int32 GEMM.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "onyx/tensor.h"

namespace onyx {

class ThreadPool;

// [lo, hi] of an integer quantized type (int2..int32, uint2..uint16); false for other types.
bool QuantIntegerRange(DataType t, int64_t* lo, int64_t* hi);

// Every element of a (small) numeric tensor, as double or as int64 (floats truncate).
std::vector<double> AllAsDoubles(const Tensor& t);
std::vector<int64_t> AllAsInt64s(const Tensor& t);

// C[m, n] = sum_k A[m, k] * B[k, n] over int32 with two's-complement wrap (ONNX lets the 32-bit
// accumulation of the integer matmul ops overflow). Row-major with leading dimensions; rows of
// C are split across the pool.
void GemmInt32(int64_t m, int64_t n, int64_t k, const int32_t* a, int64_t lda, const int32_t* b, int64_t ldb,
               int32_t* c, int64_t ldc, ThreadPool* pool);

// QLinearAdd's constant term zc - (r_first * z_first + r_second * z_second) as ONNX Runtime's
// AVX2 kernel gets it: its compiler fuses the first product into the sum (one rounding less), and
// the difference flips a code where the result lands on a half (MobileNetV2 int8: 1 in 25,088).
// `first` is the operand the kernel takes as A: the add's A, except where A alone is constant,
// which ORT hands its kernel as the scalar B (then first = B).
inline float QLinearAddFixedPart(float r_first, int32_t z_first, float r_second, int32_t z_second, int32_t zc) {
  return static_cast<float>(zc) -
         std::fma(r_first, static_cast<float>(z_first), r_second * static_cast<float>(z_second));
}

// DynamicQuantizeLinear's scale and zero point for the range [lo, hi] (lo <= 0 <= hi, NaNs
// skipped), in float as ONNX Runtime computes them: scale (hi - lo) / 255, or 1 where the range is
// one point (an all-zero input, where the op's function body would divide by 0); zero point
// nearbyint(clamp(0 - lo / scale, 0, 255)), 255 where that quotient is NaN (an infinite range,
// or a scale that underflowed to 0). Every dynamically quantizing kernel takes its parameters here.
struct DynamicQuantParams {
  float scale = 1.0f;
  uint8_t zero_point = 0;
};
DynamicQuantParams DynamicQuantParamsOf(float lo, float hi);

// Rounds half to even, as ONNX's quantizers do, then saturates to [lo, hi]; NaN gives `nan_value`.
int64_t RoundAndSaturate(double v, int64_t lo, int64_t hi, int64_t nan_value);

}  // namespace onyx
