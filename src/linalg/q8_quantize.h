// Float to uint8 quantization loops of DynamicQuantizeLinear (and the dynamically quantized
// matmuls), compiled per ISA (q8_quantize_<isa>.cc) so they vectorize.
#pragma once

#include <cstdint>

namespace onyx::linalg {

// lo = min(0, x...), hi = max(0, x...): the range DynamicQuantizeLinear quantizes (NaNs skipped).
void Q8MinMax(const float* x, int64_t n, float* lo, float* hi);

// out[i] = clamp(nearbyint(x[i] / scale) + zero_point, 0, 255), rounding half to even; NaN gives
// zero_point. Exact like the scalar formula for |x / scale| < 2^22 (beyond it the clamp decides).
void Q8QuantizeU8(const float* x, int64_t n, float scale, uint8_t zero_point, uint8_t* out);

}  // namespace onyx::linalg
