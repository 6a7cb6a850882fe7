// The float output stage of a dynamically quantized conv (com.onyx DynamicQuantizeConv): int32
// accumulators turned into float in place, with the unfused graph's own float operations, so
// the fused node stays bit for bit equal to Cast + Mul (+ Add) (+ Relu / Clip).
// One row per call, compiled per ISA (q8_to_float_<isa>.cc); the variant follows SgemmIsa().
#pragma once

#include <cstdint>

namespace onyx::linalg {

// row holds n int32 values; each becomes the float
//   v = float(acc) * scale;  v = v + *bias (when bias is not null);
//   v = v < lo ? lo : v;  v = v > hi ? hi : v;
// the product and the sum rounded once each (never one fused multiply-add), the clamp compared
// as Clip compares it (a NaN passes; infinite bounds change nothing).
void Q8ToFloat(void* row, int64_t n, float scale, const float* bias, float lo, float hi);
// The variant Q8ToFloat would call now: callers finishing many rows look it up once.
using Q8ToFloatFn = void (*)(void* row, int64_t n, float scale, const float* bias, float lo, float hi);
Q8ToFloatFn Q8ToFloatKernel();

// The per-ISA variants (Q8ToFloat picks one), for the unit tests.
void Q8ToFloatScalar(void* row, int64_t n, float scale, const float* bias, float lo, float hi);
#if defined(__x86_64__)
void Q8ToFloatAvx2(void* row, int64_t n, float scale, const float* bias, float lo, float hi);
void Q8ToFloatAvx512(void* row, int64_t n, float scale, const float* bias, float lo, float hi);
#endif

}  // namespace onyx::linalg
