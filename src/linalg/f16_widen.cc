// f16_widen.h's dispatch and scalar reference.
#include "linalg/f16_widen.h"

#include <string>

#include "linalg/gemm.h"
#include "platform/cpu_features.h"

namespace onyx::linalg {
namespace {

// Branch-free, so that the loop vectorizes on any x86-64: the half's exponent and mantissa
// shifted into a float's and scaled by 2^-112 rebias a normal half; a subnormal half's mantissa
// is placed under the exponent of 0.5 and 0.5 subtracted, which is exact.
inline float HalfToFloatBranchFree(uint16_t h) {
  const uint32_t w = static_cast<uint32_t>(h) << 16;
  const uint32_t sign = w & 0x80000000u;
  const uint32_t twice = w + w;  // exponent and mantissa at the top, sign dropped
  const uint32_t normal_bits = (twice >> 4) + (uint32_t{0xE0} << 23);
  float normal;
  __builtin_memcpy(&normal, &normal_bits, 4);
  normal *= 0x1.0p-112f;
  const uint32_t sub_bits = (twice >> 17) | (uint32_t{126} << 23);
  float sub;
  __builtin_memcpy(&sub, &sub_bits, 4);
  sub -= 0.5f;
  uint32_t nb, sb;
  __builtin_memcpy(&nb, &normal, 4);
  __builtin_memcpy(&sb, &sub, 4);
  uint32_t bits = twice < (uint32_t{1} << 27) ? sb : nb;
  // Inf and NaN by hand: the multiply would quiet a signaling NaN.
  if ((h & 0x7C00u) == 0x7C00u) bits = 0x7F800000u | ((h & 0x3FFu) << 13);
  bits |= sign;
  float out;
  __builtin_memcpy(&out, &bits, 4);
  return out;
}

}  // namespace

void WidenHalfScalar(const uint16_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = HalfToFloatBranchFree(src[i]);
}

WidenHalfFn SelectedWidenHalf() {
#if defined(__x86_64__)
  const std::string isa = SgemmIsa();
  if (isa == "avx512") return WidenHalfAvx512;
  // The AVX2 level asks only for AVX2 and FMA; every such CPU known has F16C, but it is checked.
  if (isa == "avx2" && GetCpuFeatures().f16c) return WidenHalfAvx2;
#endif
  return WidenHalfScalar;
}

void WidenHalf(const uint16_t* src, float* dst, int64_t n) { SelectedWidenHalf()(src, dst, n); }

}  // namespace onyx::linalg
