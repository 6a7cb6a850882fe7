// NCHWc pooling microkernels for AVX512. Compiled with that ISA's flags; only reached when the
// CPU has it.
#if defined(__x86_64__)

#include "linalg/f32_simd_avx512.h"
#include "linalg/f32_pool_nchwc_impl.h"

namespace onyx::linalg {

const NchwcPoolKernels kF32PoolNchwcAvx512 = MakePoolNchwcKernels<Avx512>();

}  // namespace onyx::linalg

#endif  // __x86_64__
