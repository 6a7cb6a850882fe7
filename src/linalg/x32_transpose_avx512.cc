// Cache-blocked 2-D transpose of 4-byte elements for AVX-512. Compiled with that ISA's flags;
// only reached when the CPU has it.
#if defined(__x86_64__)

#include "linalg/f32_simd_avx512.h"
#include "linalg/x32_transpose_impl.h"

namespace onyx::linalg {

constexpr X32TransposeKernels kX32TransposeAvx512 = MakeTransposeKernels<Avx512>();

}  // namespace onyx::linalg

#endif  // __x86_64__
