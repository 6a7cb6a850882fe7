// float16 bits -> float, exact (subnormals, infinities, NaN payloads and signaling NaNs kept):
// the widening HalfBodyToFloat does of every float16 weight when a session is created. One call
// per tensor, compiled per ISA (f16_widen_<isa>.cc, F16C / AVX-512 convert instructions); the
// variant follows SgemmIsa().
#pragma once

#include <cstdint>

namespace onyx::linalg {

void WidenHalf(const uint16_t* src, float* dst, int64_t n);

// The variant WidenHalf calls now, for callers that widen many short rows (a pack's panels).
using WidenHalfFn = void (*)(const uint16_t* src, float* dst, int64_t n);
WidenHalfFn SelectedWidenHalf();

// The per-ISA variants (WidenHalf picks one), for the unit tests.
void WidenHalfScalar(const uint16_t* src, float* dst, int64_t n);
#if defined(__x86_64__)
void WidenHalfAvx2(const uint16_t* src, float* dst, int64_t n);
void WidenHalfAvx512(const uint16_t* src, float* dst, int64_t n);
#endif

}  // namespace onyx::linalg
