// Direct convolution tiles, strip reorders and epilogues: avx2 instantiation.
#include "linalg/simd_avx2.h"

namespace onyx::linalg::avx2 {
constexpr int kMaxFilterBlocks = 2;
// Pixels per tile for each filter-block count: FB * PX accumulators + FB weights + 1 broadcast
// fit the register file.
constexpr int kMaxPixels[kMaxFilterBlocks + 1] = {0, 12, 6};
}  // namespace onyx::linalg::avx2

#include "linalg/f32_conv_nchwc_impl.h"
