// Cache-blocked 2-D transpose of 4-byte elements for AVX2. Compiled with that ISA's flags;
// only reached when the CPU has it.
#if defined(__x86_64__)

#include "linalg/f32_simd_avx2.h"
#include "linalg/x32_transpose_impl.h"

namespace onyx::linalg {

constexpr X32TransposeKernels kX32TransposeAvx2 = MakeTransposeKernels<Avx2>();

}  // namespace onyx::linalg

#endif  // __x86_64__
