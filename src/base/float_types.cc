#include "base/float_types.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace onyx {
namespace {

uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

float BitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Layout of a small float format.
struct MiniFormat {
  int exp_bits;
  int man_bits;
  int bias;
  bool has_inf;        // IEEE-style infinities (e5m2)
  bool nan_is_0x80;    // the *fnuz formats: 0x80 is the only NaN, no negative zero
  bool has_nan;        // float4e2m1 has no NaN
  uint8_t nan_code;    // positive NaN code when !nan_is_0x80
};

MiniFormat FormatOf(DataType t) {
  switch (t) {
    case DataType::kFloat8E4M3FN: return {4, 3, 7, false, false, true, 0x7F};
    case DataType::kFloat8E4M3FNUZ: return {4, 3, 8, false, true, true, 0x80};
    case DataType::kFloat8E5M2: return {5, 2, 15, true, false, true, 0x7E};
    case DataType::kFloat8E5M2FNUZ: return {5, 2, 16, false, true, true, 0x80};
    case DataType::kFloat4E2M1: return {2, 1, 1, false, false, false, 0};
    default: return {0, 0, 0, false, false, false, 0};
  }
}

}  // namespace

uint16_t FloatToHalfBits(float f) {
  const uint32_t u = FloatBits(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t abs = u & 0x7FFFFFFFu;
  if (abs >= 0x7F800000u) {  // Inf or NaN
    return static_cast<uint16_t>(sign | (abs > 0x7F800000u ? 0x7E00u : 0x7C00u));
  }
  if (abs >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // rounds to >= 65520: Inf
  if (abs < 0x38800000u) {
    // Subnormal half (or zero): value = abs_float; quantum is 2^-24.
    const float a = BitsFloat(abs);
    const float scaled = a * 16777216.0f;  // exact: 2^24
    const auto m = static_cast<uint32_t>(std::nearbyint(scaled));  // RNE under default rounding
    return static_cast<uint16_t>(sign | m);
  }
  // Normal: re-bias the exponent from 127 to 15 and round the mantissa 23 -> 10 bits to nearest
  // even without branches (adding 0xFFF plus the kept lsb carries exactly when RNE rounds up;
  // a carry into the exponent is the right result).
  const uint32_t rebiased = abs - ((127u - 15u) << 23);
  const uint32_t half = (rebiased + 0xFFFu + ((rebiased >> 13) & 1u)) >> 13;
  return static_cast<uint16_t>(sign | half);
}

float HalfBitsToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  const uint32_t mant = h & 0x3FFu;
  if (exp == 0) {
    const float v = static_cast<float>(mant) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  if (exp == 31) return BitsFloat(sign | 0x7F800000u | (mant << 13));
  return BitsFloat(sign | ((exp + 127 - 15) << 23) | (mant << 13));
}

uint16_t FloatToBFloat16Bits(float f) {
  uint32_t u = FloatBits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);  // quiet NaN
  const uint32_t lsb = (u >> 16) & 1u;
  u += 0x7FFFu + lsb;
  return static_cast<uint16_t>(u >> 16);
}

namespace {

// Rounds sig * 2^-shift to an integer, ties to even (sig < 2^24).
uint32_t ShiftRightRne(uint32_t sig, int shift) {
  if (shift <= 0) return sig;
  if (shift > 25) return 0;  // below half of one unit
  const uint32_t q = sig >> shift;
  const uint32_t rem = sig & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  return q + static_cast<uint32_t>((rem > half) | ((rem == half) & (q & 1u)));
}

}  // namespace

uint8_t FloatToMinifloat(float f, DataType type, bool saturate) {
  const MiniFormat fmt = FormatOf(type);
  if (fmt.exp_bits == 0) return 0;
  const int total = fmt.exp_bits + fmt.man_bits;
  const uint32_t u = FloatBits(f);
  const uint32_t abs = u & 0x7FFFFFFFu;
  const uint32_t sign = (u >> 31) ? (1u << total) : 0u;
  const uint32_t all = (1u << total) - 1;
  // Largest finite code: e5m2 keeps its top exponent for Inf/NaN, e4m3fn keeps S.1111.111 for NaN.
  const uint32_t max_code = fmt.has_inf ? all - (1u << fmt.man_bits) : (fmt.has_nan && !fmt.nan_is_0x80 ? all - 1 : all);
  const uint32_t inf_code = max_code + 1;  // e5m2 only
  auto nan = [&]() -> uint8_t {
    if (!fmt.has_nan) return static_cast<uint8_t>(1u << total);  // float4e2m1: -0, as the ONNX data has it
    if (fmt.nan_is_0x80) return 0x80;
    return static_cast<uint8_t>(sign | fmt.nan_code);
  };
  // Out of range after rounding (or infinite), per the saturate tables of ONNX's Cast.
  auto overflow = [&]() -> uint8_t {
    if (saturate || !fmt.has_nan) return static_cast<uint8_t>(sign | max_code);
    if (fmt.has_inf) return static_cast<uint8_t>(sign | inf_code);
    return nan();
  };
  if (abs > 0x7F800000u) return nan();
  if (abs == 0x7F800000u) return overflow();
  const int e = static_cast<int>(abs >> 23);
  uint32_t code = 0;
  if (e != 0) {  // float subnormals are far below every format's smallest subnormal
    const uint32_t sig = (abs & 0x7FFFFFu) | 0x800000u;  // |f| = sig * 2^(e - 150)
    const int te = e - 127 + fmt.bias;                   // biased exponent in the target
    const int shift = 23 - fmt.man_bits + (te < 1 ? 1 - te : 0);
    // A carry out of the mantissa bumps the exponent field, as it should.
    code = (te >= 1 ? static_cast<uint32_t>(te - 1) << fmt.man_bits : 0u) + ShiftRightRne(sig, shift);
  }
  if (code > max_code) return overflow();
  if (code == 0 && fmt.nan_is_0x80) return 0;  // no negative zero in the fnuz formats
  return static_cast<uint8_t>(sign | code);
}

float MinifloatToFloat(uint8_t bits, DataType type) {
  const MiniFormat fmt = FormatOf(type);
  if (fmt.exp_bits == 0) return 0.0f;
  const int total = fmt.exp_bits + fmt.man_bits;
  bits &= static_cast<uint8_t>((1u << (total + 1)) - 1);
  const bool neg = (bits >> total) & 1u;
  const uint32_t exp = (bits >> fmt.man_bits) & ((1u << fmt.exp_bits) - 1);
  const uint32_t mant = bits & ((1u << fmt.man_bits) - 1);
  const float qnan = std::numeric_limits<float>::quiet_NaN();
  if (fmt.nan_is_0x80 && bits == 0x80) return qnan;
  if (fmt.has_nan && !fmt.nan_is_0x80 && !fmt.has_inf && (bits & 0x7F) == 0x7F) return neg ? -qnan : qnan;
  if (fmt.has_inf && exp == (1u << fmt.exp_bits) - 1) {
    if (mant == 0) return neg ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
    return neg ? -qnan : qnan;
  }
  float v;
  if (exp == 0) {
    v = static_cast<float>(std::ldexp(static_cast<double>(mant), 1 - fmt.bias - fmt.man_bits));
  } else {
    v = static_cast<float>(std::ldexp(static_cast<double>(mant + (1u << fmt.man_bits)),
                                      static_cast<int>(exp) - fmt.bias - fmt.man_bits));
  }
  return neg ? -v : v;
}

uint8_t FloatToE8M0(float f, bool saturate, E8M0Rounding rounding) {
  if (std::isnan(f)) return 0xFF;
  if (std::isinf(f)) return saturate ? 0xFE : 0xFF;
  // Negative inputs are unspecified by ONNX: the magnitude is used.
  const uint32_t u = FloatBits(std::fabs(f));
  int32_t exp = static_cast<int32_t>(u >> 23);
  const uint32_t mant = u & 0x7FFFFFu;
  if (exp == 0) {
    // 2^-127 (code 0) is the float subnormal with mantissa 0x400000. Below it (zero included)
    // ONNX's table gives E8M0_MIN when saturating and NaN otherwise.
    if (mant < 0x400000u) return saturate ? 0x00 : 0xFF;
    if (rounding == E8M0Rounding::kDown) return 0x00;
    if (rounding == E8M0Rounding::kUp) return mant > 0x400000u ? 0x01 : 0x00;
    return mant >= 0x600000u ? 0x01 : 0x00;  // 1.5 * 2^-127 is the tie; ties go up
  }
  if (rounding == E8M0Rounding::kUp && mant != 0) ++exp;
  if (rounding == E8M0Rounding::kNearest && mant >= 0x400000u) ++exp;  // ties (1.5 * 2^e) go up
  if (exp > 254) return saturate ? 0xFE : 0xFF;
  return static_cast<uint8_t>(exp);
}

float E8M0ToFloat(uint8_t bits) {
  if (bits == 0xFF) return std::numeric_limits<float>::quiet_NaN();
  if (bits == 0) return BitsFloat(0x00400000u);  // 2^-127 is a float subnormal
  return BitsFloat(static_cast<uint32_t>(bits) << 23);
}

}  // namespace onyx
