// Direct convolution tiles, strip reorders and epilogues: scalar instantiation.
#include "linalg/simd_scalar.h"

namespace onyx::linalg::scalar {
constexpr int kMaxFilterBlocks = 1;
constexpr int kMaxPixels = 4;
}  // namespace onyx::linalg::scalar

#include "linalg/f32_conv_nchwc_impl.h"
