// The plain body of q8_gemv.h's product over the packed layout, instantiated by the AVX2 and
// baseline files with their flags. Internal linkage on purpose (see f32_gemm_tile_impl.h).
#pragma once

#include <cstdint>

namespace onyx::linalg {
namespace {

// sums[j] = sum_k a[k] * packed[k, j] for the 16 columns of each panel; a is uint8 padded with
// zeros to a multiple of 4, packed int8 [panels][kp / 4][16][4].
template <int kUnused = 0>
void Q8GemvPanelsImpl(const uint8_t* __restrict a, const int8_t* __restrict packed, int64_t kp, int64_t panels,
                      int32_t* __restrict sums) {
  for (int64_t p = 0; p < panels; ++p) {
    int32_t acc[16] = {};
    const int8_t* __restrict b = packed + p * kp * 16;
    for (int64_t g = 0; g < kp / 4; ++g)
      for (int c = 0; c < 16; ++c)
        for (int t = 0; t < 4; ++t) acc[c] += int32_t{a[g * 4 + t]} * int32_t{b[(g * 16 + c) * 4 + t]};
    for (int c = 0; c < 16; ++c) sums[p * 16 + c] = acc[c];
  }
}

}  // namespace
}  // namespace onyx::linalg
