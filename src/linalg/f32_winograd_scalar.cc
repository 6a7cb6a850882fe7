// Winograd F(4x4, 3x3) transforms: scalar instantiation.
#include "linalg/simd_scalar.h"  // defines Vec; must precede the kernels

#include "linalg/f32_winograd_impl.h"
