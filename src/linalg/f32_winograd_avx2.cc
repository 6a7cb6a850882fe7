// Winograd F(4x4, 3x3) transforms: avx2 instantiation.
#include "linalg/simd_avx2.h"  // defines Vec; must precede the kernels

#include "linalg/f32_winograd_impl.h"
