// Direct convolution tiles, strip reorders and epilogues: avx512 instantiation.
#include "linalg/simd_avx512.h"

namespace onyx::linalg::avx512 {
constexpr int kMaxFilterBlocks = 4;
// Pixels per tile for each filter-block count: FB * PX accumulators + FB weights + 1 broadcast
// fit the register file.
constexpr int kMaxPixels[kMaxFilterBlocks + 1] = {0, 16, 12, 8, 6};
}  // namespace onyx::linalg::avx512

#include "linalg/f32_conv_nchwc_impl.h"
