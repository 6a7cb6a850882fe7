// Depthwise convolution kernels: scalar instantiation.
#include "linalg/simd_scalar.h"  // defines Vec; must precede the kernels

#include "linalg/f32_dwconv_impl.h"
