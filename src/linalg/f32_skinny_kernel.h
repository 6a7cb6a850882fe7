// The per-ISA dot-product kernels of the GEMM's few-column path (f32_gemm.cc):
//   out[i * ldo + j] = sum_p a[i * lda + p] * bt[j * k + p]   for i < rows, j < n (1..4).
#pragma once

#include <cstdint>

namespace onyx::linalg {

constexpr int kSkinnyMaxN = 4;

namespace scalar {
void SkinnyDots(const float* a, int64_t lda, int64_t rows, int64_t k, const float* bt, int n, float* out,
                int64_t ldo);
}
#if defined(__x86_64__)
namespace avx2 {
void SkinnyDots(const float* a, int64_t lda, int64_t rows, int64_t k, const float* bt, int n, float* out,
                int64_t ldo);
}
namespace avx512 {
void SkinnyDots(const float* a, int64_t lda, int64_t rows, int64_t k, const float* bt, int n, float* out,
                int64_t ldo);
}
#endif

}  // namespace onyx::linalg
