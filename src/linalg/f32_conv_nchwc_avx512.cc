// Direct convolution tiles, strip reorders and epilogues: avx512 instantiation.
#include "linalg/simd_avx512.h"

namespace onyx::linalg::avx512 {
constexpr int kMaxFilterBlocks = 4;
constexpr int kMaxPixels = 6;
}  // namespace onyx::linalg::avx512

#include "linalg/f32_conv_nchwc_impl.h"
