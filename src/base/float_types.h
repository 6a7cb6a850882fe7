// Narrow floating-point formats: IEEE half, bfloat16, the float8 variants, float8e8m0 and
// float4e2m1. Conversions round to nearest even unless said otherwise; NaN stays NaN.
#pragma once

#include <cstdint>

#include "onyx/dtype.h"

namespace onyx {

uint16_t FloatToHalfBits(float f);
float HalfBitsToFloat(uint16_t h);
uint16_t FloatToBFloat16Bits(float f);
inline float BFloat16BitsToFloat(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}

// Storage wrappers so templates can tell the formats apart from plain integers.
struct Float16 {
  uint16_t bits = 0;
  Float16() = default;
  explicit Float16(float f) : bits(FloatToHalfBits(f)) {}
  static Float16 FromBits(uint16_t b) { Float16 h; h.bits = b; return h; }
  explicit operator float() const { return HalfBitsToFloat(bits); }
};
struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  explicit BFloat16(float f) : bits(FloatToBFloat16Bits(f)) {}
  static BFloat16 FromBits(uint16_t b) { BFloat16 h; h.bits = b; return h; }
  explicit operator float() const { return BFloat16BitsToFloat(bits); }
};

// float8 (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz) and float4e2m1 (in the low nibble).
// Rounds to nearest even; "out of range" is judged after rounding. saturate (ONNX Cast's
// tables): out-of-range values and infinities become the largest finite value; otherwise they
// become Inf (e5m2) or NaN (the others). float4e2m1 has neither and always saturates; NaN
// becomes -0 there, as the ONNX conformance data has it. The fnuz formats have no -0.
uint8_t FloatToMinifloat(float f, DataType type, bool saturate);
float MinifloatToFloat(uint8_t bits, DataType type);

// float8e8m0: a biased power of two (bias 127), 0xFF is NaN; no sign, no zero.
// kUp/kDown round the magnitude away from/towards zero, kNearest to the nearer power of two
// (ties up). Above 2^127 after rounding, or Inf: 0xFE when saturating, else NaN. Below 2^-127
// (zero included): 0x00 when saturating, else NaN.
enum class E8M0Rounding { kUp, kDown, kNearest };
uint8_t FloatToE8M0(float f, bool saturate, E8M0Rounding rounding);
float E8M0ToFloat(uint8_t bits);

}  // namespace onyx
