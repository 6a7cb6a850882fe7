// exp, log, tanh, erf, sigmoid, silu, softplus and the GELU forms for AVX-512. Compiled
// with that ISA's flags; only reached when the CPU has it.
#if defined(__x86_64__)

#include "linalg/f32_simd_avx512.h"
#include "linalg/f32_vunary_impl.h"

namespace onyx::linalg {

constexpr F32VUnaryKernels kF32VUnaryAvx512 = MakeVUnaryKernels<Avx512>();

}  // namespace onyx::linalg

#endif  // __x86_64__
