// Winograd F(4x4, 3x3) transforms: avx512 instantiation.
#include "linalg/simd_avx512.h"  // defines Vec; must precede the kernels

#include "linalg/f32_winograd_impl.h"
