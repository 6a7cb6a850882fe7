// Binary arithmetic over arrays and scalars for AVX2 + FMA. Compiled with that ISA's flags; only
// reached when the CPU has it.
#if defined(__x86_64__)

#include "linalg/f32_simd_avx2.h"
#include "linalg/f32_vbinary_impl.h"

namespace onyx::linalg {

constexpr F32VBinaryKernels kF32VBinaryAvx2 = MakeVBinaryKernels<Avx2>();

}  // namespace onyx::linalg

#endif  // __x86_64__
