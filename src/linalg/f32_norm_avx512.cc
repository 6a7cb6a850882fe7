// Layer normalization and RMS normalization rows for AVX-512. Compiled with that ISA's flags;
// only reached when the CPU has it.
#if defined(__x86_64__)

#include "linalg/f32_norm_impl.h"
#include "linalg/f32_simd_avx512.h"

namespace onyx::linalg {

constexpr F32NormKernels kF32NormAvx512 = MakeNormKernels<Avx512>();

}  // namespace onyx::linalg

#endif  // __x86_64__
