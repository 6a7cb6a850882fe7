// Float to 8-bit quantization loops of QuantizeLinear, DynamicQuantizeLinear (and the
// dynamically quantized matmuls), DequantizeLinear's 8-bit to float loop, QLinearAdd's
// requantizing sum and QLinearMul's requantizing product, compiled per ISA (q8_quantize_<isa>.cc) so they vectorize.
#pragma once

#include <cstdint>

namespace onyx {
class ThreadPool;
}

namespace onyx::linalg {

// lo = min(0, x...), hi = max(0, x...): the range DynamicQuantizeLinear quantizes (NaNs skipped).
void Q8MinMax(const float* x, int64_t n, float* lo, float* hi);
// The same with chunks of x on the pool's threads (the minimum and maximum of the chunks' give
// the same range in any split; a null pool runs on the caller).
void Q8MinMax(const float* x, int64_t n, float* lo, float* hi, ThreadPool* pool);

// out[i] = clamp(nearbyint(x[i] / scale) + zero_point, 0, 255), rounding half to even; a NaN
// quotient gives the type's lowest code (0 here, -128 for int8), as ONNX Runtime's. Exact like
// the scalar formula for |x / scale| < 2^22 (beyond it the clamp decides).
void Q8QuantizeU8(const float* x, int64_t n, float scale, uint8_t zero_point, uint8_t* out);
// The variants Q8MinMax and Q8QuantizeU8 would call now (the ISA the SGEMM runs): callers of
// many short rows look them up once (a lookup per row of a few hundred values cost 20 % of it).
using Q8MinMaxFn = void (*)(const float* x, int64_t n, float* lo, float* hi);
using Q8QuantizeU8Fn = void (*)(const float* x, int64_t n, float scale, uint8_t zero_point, uint8_t* out);
Q8MinMaxFn Q8MinMaxKernel();
Q8QuantizeU8Fn Q8QuantizeU8Kernel();
// The same to int8: clamp(nearbyint(x[i] / scale) + zero_point, -128, 127).
void Q8QuantizeS8(const float* x, int64_t n, float scale, int8_t zero_point, int8_t* out);

// out[i] = (float(x[i]) - zero_point) * scale: DequantizeLinear's float arithmetic (a subtraction
// and a multiplication, each rounded once).
void Q8DequantizeU8(const uint8_t* x, int64_t n, float scale, float zero_point, float* out);
void Q8DequantizeS8(const int8_t* x, int64_t n, float scale, float zero_point, float* out);

// QLinearAdd's row: out[i] = saturate(round_half_even(fma(x[i], rx, fma(y[i * y_step], ry, fixed))))
// with y_step 0 (one y for the row) or 1; `fixed` holds the zero points. The clamp to the type's
// range comes before the rounding, and both fmas round once, as the scalar formula does.
void Q8AddU8(const uint8_t* x, float rx, const uint8_t* y, int64_t y_step, float ry, float fixed, int64_t n,
             uint8_t* out);
void Q8AddS8(const int8_t* x, float rx, const int8_t* y, int64_t y_step, float ry, float fixed, int64_t n,
             int8_t* out);

// QLinearMul's row: out[i] = round_half_even(clamp(float((x[i] - zx) * (y[i * y_step] - zy)) * ratio,
// lo - zc, hi - zc) + zc), lo..hi the type's range, y_step 0 (one y for the row) or 1: the
// integer product, one float multiplication, the clamp, then the output zero point joins before
// the rounding (ONNX Runtime's order). A NaN product (a NaN ratio) gives the low end.
void Q8MulU8(const uint8_t* x, int32_t zx, const uint8_t* y, int64_t y_step, int32_t zy, float ratio, int32_t zc,
             int64_t n, uint8_t* out);
void Q8MulS8(const int8_t* x, int32_t zx, const int8_t* y, int64_t y_step, int32_t zy, float ratio, int32_t zc,
             int64_t n, int8_t* out);

}  // namespace onyx::linalg
