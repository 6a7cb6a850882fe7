// Few-column GEMM dot products: scalar instantiation.
#include "linalg/simd_scalar.h"  // defines Vec; must precede the kernels

#include "linalg/f32_skinny_impl.h"
