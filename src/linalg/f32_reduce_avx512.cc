// Sums, sums of squares and of |x|, max and min of f32 runs and across rows for AVX-512.
// Compiled with that ISA's flags; only reached when the CPU has it.
#if defined(__x86_64__)

#include "linalg/f32_reduce_impl.h"
#include "linalg/f32_simd_avx512.h"

namespace onyx::linalg {

constexpr F32ReduceKernels kF32ReduceAvx512 = MakeReduceKernels<Avx512>();

}  // namespace onyx::linalg

#endif  // __x86_64__
