// The per-ISA entry points of Q4Gemv (q4_gemm.h); q4_gemv_config.cc picks one.
#pragma once

#include <cstdint>

namespace onyx::linalg {

using Q4GemvFn = void (*)(const float* a, int64_t lda, int rows, int64_t k, const uint8_t* b, int64_t block,
                          const float* scales, const float* zeros, const float* bias, float* y, int64_t ldy,
                          int64_t n0, int64_t n1);

void Q4GemvScalar(const float* a, int64_t lda, int rows, int64_t k, const uint8_t* b, int64_t block,
                  const float* scales, const float* zeros, const float* bias, float* y, int64_t ldy, int64_t n0,
                  int64_t n1);
#if defined(__x86_64__)
void Q4GemvAvx2(const float* a, int64_t lda, int rows, int64_t k, const uint8_t* b, int64_t block,
                const float* scales, const float* zeros, const float* bias, float* y, int64_t ldy, int64_t n0,
                int64_t n1);
void Q4GemvAvx512(const float* a, int64_t lda, int rows, int64_t k, const uint8_t* b, int64_t block,
                  const float* scales, const float* zeros, const float* bias, float* y, int64_t ldy, int64_t n0,
                  int64_t n1);
#endif

}  // namespace onyx::linalg
