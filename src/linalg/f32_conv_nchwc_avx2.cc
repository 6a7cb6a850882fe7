// Direct convolution tiles, strip reorders and epilogues: avx2 instantiation.
#include "linalg/simd_avx2.h"

namespace onyx::linalg::avx2 {
constexpr int kMaxFilterBlocks = 2;
constexpr int kMaxPixels = 6;
}  // namespace onyx::linalg::avx2

#include "linalg/f32_conv_nchwc_impl.h"
