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
  float max_finite;
};

MiniFormat FormatOf(DataType t) {
  switch (t) {
    case DataType::kFloat8E4M3FN: return {4, 3, 7, false, false, true, 0x7F, 448.0f};
    case DataType::kFloat8E4M3FNUZ: return {4, 3, 8, false, true, true, 0x80, 240.0f};
    case DataType::kFloat8E5M2: return {5, 2, 15, true, false, true, 0x7F, 57344.0f};
    case DataType::kFloat8E5M2FNUZ: return {5, 2, 16, false, true, true, 0x80, 57344.0f};
    case DataType::kFloat4E2M1: return {2, 1, 1, false, false, false, 0, 6.0f};
    default: return {0, 0, 0, false, false, false, 0, 0.0f};
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
  // Normal: re-bias exponent from 127 to 15, round mantissa 23 -> 10 bits to nearest even.
  uint32_t mant = abs & 0x007FFFFFu;
  uint32_t exp = (abs >> 23) - 127 + 15;
  uint32_t half = (exp << 10) | (mant >> 13);
  const uint32_t rest = mant & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
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

uint8_t FloatToMinifloat(float f, DataType type, bool saturate) {
  const MiniFormat fmt = FormatOf(type);
  const uint8_t sign_bit = static_cast<uint8_t>(1u << (fmt.exp_bits + fmt.man_bits));
  const uint8_t max_code = [&] {
    // Largest finite code: all bits set except where NaN/Inf live.
    const int total = fmt.exp_bits + fmt.man_bits;
    const uint8_t all = static_cast<uint8_t>((1u << total) - 1);
    if (fmt.has_inf) return static_cast<uint8_t>(all - (1u << fmt.man_bits));  // e5m2: 0x7B
    if (fmt.has_nan && !fmt.nan_is_0x80) return static_cast<uint8_t>(all - 1);  // e4m3fn: 0x7E
    return all;                                                                  // fnuz, e2m1
  }();
  // e5m2's infinity: all exponent bits set, mantissa zero, just above the largest finite code.
  const uint8_t inf_code = static_cast<uint8_t>(max_code + 1);
  const bool neg = std::signbit(f);
  const uint8_t sign = neg ? sign_bit : 0;
  const uint8_t nan = fmt.nan_is_0x80 ? 0x80 : static_cast<uint8_t>(fmt.nan_code | sign);

  if (std::isnan(f)) return fmt.has_nan ? (fmt.nan_is_0x80 ? 0x80 : static_cast<uint8_t>(fmt.nan_code | sign)) : static_cast<uint8_t>(sign | max_code);
  const float a = std::fabs(f);
  auto overflow = [&]() -> uint8_t {
    if (saturate || !fmt.has_nan) return static_cast<uint8_t>(sign | max_code);
    if (fmt.has_inf) return static_cast<uint8_t>(sign | inf_code);
    return nan;
  };
  if (std::isinf(f)) {
    if (fmt.has_inf) return static_cast<uint8_t>(sign | (saturate ? max_code : inf_code));
    if (fmt.nan_is_0x80) return saturate ? static_cast<uint8_t>(sign | max_code) : nan;
    return overflow();
  }
  if (a == 0.0f) return fmt.nan_is_0x80 ? 0 : sign;

  const int min_exp = 1 - fmt.bias;  // exponent of the smallest normal
  int e;
  std::frexp(a, &e);
  e -= 1;  // a = m * 2^e with m in [1, 2)
  if (e < min_exp) e = min_exp;
  const double quantum = std::ldexp(1.0, e - fmt.man_bits);
  const double r = std::nearbyint(static_cast<double>(a) / quantum) * quantum;
  if (r > fmt.max_finite) return overflow();
  if (r == 0.0) return fmt.nan_is_0x80 ? 0 : sign;
  int re;
  std::frexp(r, &re);
  re -= 1;
  uint32_t code;
  if (re < min_exp) {
    code = static_cast<uint32_t>(r / std::ldexp(1.0, min_exp - fmt.man_bits));
  } else {
    const uint32_t mant = static_cast<uint32_t>(r / std::ldexp(1.0, re - fmt.man_bits)) - (1u << fmt.man_bits);
    code = (static_cast<uint32_t>(re + fmt.bias) << fmt.man_bits) | mant;
  }
  return static_cast<uint8_t>(sign | code);
}

float MinifloatToFloat(uint8_t bits, DataType type) {
  const MiniFormat fmt = FormatOf(type);
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
  const uint32_t u = FloatBits(std::fabs(f));
  // Work on a = 1.m * 2^(exp-127); float subnormals are treated as 0.m * 2^-126.
  int32_t exp = static_cast<int32_t>(u >> 23);
  const uint32_t mant = u & 0x7FFFFFu;
  if (exp == 0) {
    if (mant == 0) return 0x00;  // no zero in e8m0: the smallest value, 2^-127
    // 2^-127 is mantissa 0x400000 with exp 0; values above it round to 2^-127 or 2^-126.
    if (rounding == E8M0Rounding::kDown) return 0x00;
    if (rounding == E8M0Rounding::kUp) return mant > 0x400000u ? 0x01 : 0x00;
    return mant >= 0x600000u ? 0x01 : 0x00;
  }
  if (rounding == E8M0Rounding::kUp && mant != 0) ++exp;
  if (rounding == E8M0Rounding::kNearest && mant >= 0x400000u) ++exp;  // ties go up
  if (exp > 254) return saturate ? 0xFE : 0xFF;
  return static_cast<uint8_t>(exp);
}

float E8M0ToFloat(uint8_t bits) {
  if (bits == 0xFF) return std::numeric_limits<float>::quiet_NaN();
  if (bits == 0) return BitsFloat(0x00400000u);  // 2^-127 is a float subnormal
  return BitsFloat(static_cast<uint32_t>(bits) << 23);
}

}  // namespace onyx
