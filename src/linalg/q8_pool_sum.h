// Sums of 8-bit codes over contiguous planes (QLinearGlobalAveragePool channels first: one plane
// per channel), exact in int32: sums[c] = sum over p < image of x[c * image + p]. Compiled per ISA
// (q8_pool_sum_<isa>.cc): the byte loads go through sum-of-absolute-differences against zero, 8
// codes per 64-bit lane, where the compiler's loop widened every code to 32 bits (about 2.7
// instructions a code on MobileNetV2's 1280 planes of 7 x 7).
#pragma once

#include <cstdint>

namespace onyx::linalg {

void Q8PlaneSumsU8(const uint8_t* x, int64_t planes, int64_t image, int32_t* sums);
void Q8PlaneSumsS8(const int8_t* x, int64_t planes, int64_t image, int32_t* sums);

}  // namespace onyx::linalg
