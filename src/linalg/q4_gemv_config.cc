// Q4Gemv's variant: the ISA the SGEMM runs now (so ForceIsa / ONYX_LINALG_ISA test each one).
#include <string>

#include "linalg/gemm.h"
#include "linalg/q4_gemm.h"
#include "linalg/q4_gemv_kernel.h"

namespace onyx::linalg {

void Q4PermuteA(const float* a, int64_t lda, int rows, int64_t k, float* out) {
  const int64_t whole = k / 32 * 32;
  for (int r = 0; r < rows; ++r) {
    const float* src = a + r * lda;
    float* dst = out + r * k;
    for (int64_t c = 0; c < whole; c += 32)
      for (int64_t i = 0; i < 16; ++i) {
        dst[c + i] = src[c + 2 * i];
        dst[c + 16 + i] = src[c + 2 * i + 1];
      }
    for (int64_t i = whole; i < k; ++i) dst[i] = src[i];
  }
}

void Q4Gemv(const float* a, int64_t lda, int rows, int64_t k, const uint8_t* b, int64_t block, const float* scales,
            const float* zeros, const float* bias, float* y, int64_t ldy, int64_t n0, int64_t n1) {
  Q4GemvFn fn = &Q4GemvScalar;
#if defined(__x86_64__)
  const std::string isa = SgemmIsa();
  if (isa == "avx512") fn = &Q4GemvAvx512;
  if (isa == "avx2") fn = &Q4GemvAvx2;
#endif
  fn(a, lda, rows, k, b, block, scales, zeros, bias, y, ldy, n0, n1);
}

}  // namespace onyx::linalg
