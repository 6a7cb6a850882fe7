// Direct convolution tiles, strip reorders and epilogues: scalar instantiation.
#include "linalg/simd_scalar.h"

namespace onyx::linalg::scalar {
constexpr int kMaxFilterBlocks = 1;
// Pixels per tile for each filter-block count: FB * PX accumulators + FB weights + 1 broadcast
// fit the register file.
constexpr int kMaxPixels[kMaxFilterBlocks + 1] = {0, 4};
}  // namespace onyx::linalg::scalar

#include "linalg/f32_conv_nchwc_impl.h"
