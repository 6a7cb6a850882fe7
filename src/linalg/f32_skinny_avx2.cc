// Few-column GEMM dot products: avx2 instantiation.
#include "linalg/simd_avx2.h"  // defines Vec; must precede the kernels

#include "linalg/f32_skinny_impl.h"
