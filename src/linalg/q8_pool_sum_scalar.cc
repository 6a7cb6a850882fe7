// q8_pool_sum.h's sums as plain loops: the reference the vector variants are tested against.
#include <cstdint>

namespace onyx::linalg {

template <typename T>
static void PlaneSums(const T* x, int64_t planes, int64_t image, int32_t* sums) {
  for (int64_t c = 0; c < planes; ++c) {
    int32_t s = 0;
    for (int64_t p = 0; p < image; ++p) s += x[c * image + p];
    sums[c] = s;
  }
}

void Q8PlaneSumsU8Scalar(const uint8_t* x, int64_t planes, int64_t image, int32_t* sums) {
  PlaneSums(x, planes, image, sums);
}

void Q8PlaneSumsS8Scalar(const int8_t* x, int64_t planes, int64_t image, int32_t* sums) {
  PlaneSums(x, planes, image, sums);
}

}  // namespace onyx::linalg
