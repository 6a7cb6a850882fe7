// Few-column GEMM dot products: avx512 instantiation.
#include "linalg/simd_avx512.h"  // defines Vec; must precede the kernels

#include "linalg/f32_skinny_impl.h"
