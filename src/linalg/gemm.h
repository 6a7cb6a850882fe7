// Single-precision matrix multiply, row-major:
//   C[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * C
// op(X) is X or its transpose. beta == 0 means C is write-only (its old contents may be NaN).
#pragma once

#include <cstdint>

namespace onyx {
class ThreadPool;
}

namespace onyx::linalg {

void Sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
           const float* b, int64_t ldb, float beta, float* c, int64_t ldc, ThreadPool* pool);

// The plain reference used by tests as the oracle for optimized variants.
void SgemmReference(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                    int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

}  // namespace onyx::linalg
