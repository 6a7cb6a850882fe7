// Depthwise convolution kernels: avx512 instantiation.
#include "linalg/simd_avx512.h"  // defines Vec; must precede the kernels

#include "linalg/f32_dwconv_impl.h"
