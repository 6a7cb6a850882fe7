// Q4Gemv reference: one code at a time, in double, reading A as Q4PermuteA lays it out. The oracle for the SIMD variants' tests and
// the path of CPUs without AVX2.
#include <cstdint>

#include "linalg/q4_gemv_kernel.h"

namespace onyx::linalg {

void Q4GemvScalar(const float* a, int64_t lda, int rows, int64_t k, const uint8_t* b, int64_t block,
                  const float* scales, const float* zeros, const float* bias, float* y, int64_t ldy, int64_t n0,
                  int64_t n1) {
  const int64_t k_blocks = (k + block - 1) / block, blob = block / 2;
  for (int64_t n = n0; n < n1; ++n)
    for (int r = 0; r < rows; ++r) {
      double sum = bias != nullptr ? bias[n] : 0.0;
      for (int64_t kk = 0; kk < k; ++kk) {
        const int64_t g = kk / block, j = kk % block;
        const uint8_t byte = b[(n * k_blocks + g) * blob + j / 2];
        const int code = j % 2 == 0 ? byte & 15 : byte >> 4;
        const double w = (code - static_cast<double>(zeros[n * k_blocks + g])) * scales[n * k_blocks + g];
        // Where Q4PermuteA put value kk.
        const int64_t c = kk / 32 * 32, i = kk % 32;
        const int64_t pos = c + 32 <= k ? c + (i % 2 == 0 ? i / 2 : 16 + i / 2) : kk;
        sum += static_cast<double>(a[r * lda + pos]) * w;
      }
      y[r * ldy + n] = static_cast<float>(sum);
    }
}

}  // namespace onyx::linalg
