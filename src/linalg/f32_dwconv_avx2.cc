// Depthwise convolution kernels: avx2 instantiation.
#include "linalg/simd_avx2.h"  // defines Vec; must precede the kernels

#include "linalg/f32_dwconv_impl.h"
