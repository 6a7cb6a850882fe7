#include "linalg/gemm.h"

#include <algorithm>
#include <vector>

#include "platform/thread_pool.h"

namespace onyx::linalg {

void SgemmReference(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                    int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0.0;
      for (int64_t p = 0; p < k; ++p) {
        const float av = trans_a ? a[p * lda + i] : a[i * lda + p];
        const float bv = trans_b ? b[j * ldb + p] : b[p * ldb + j];
        acc += static_cast<double>(av) * bv;
      }
      const float prev = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
      c[i * ldc + j] = static_cast<float>(alpha * acc) + prev;
    }
}

namespace {

// Rows [row_begin, row_end) of C with B already in row-major [K, N] form.
void GemmRows(int64_t row_begin, int64_t row_end, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
              bool trans_a, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  std::vector<float> acc(static_cast<size_t>(n));
  for (int64_t i = row_begin; i < row_end; ++i) {
    std::fill(acc.begin(), acc.end(), 0.0f);
    for (int64_t p = 0; p < k; ++p) {
      const float av = trans_a ? a[p * lda + i] : a[i * lda + p];
      const float* brow = b + p * ldb;
      for (int64_t j = 0; j < n; ++j) acc[j] += av * brow[j];
    }
    float* crow = c + i * ldc;
    if (beta == 0.0f) {
      for (int64_t j = 0; j < n; ++j) crow[j] = alpha * acc[j];
    } else {
      for (int64_t j = 0; j < n; ++j) crow[j] = alpha * acc[j] + beta * crow[j];
    }
  }
}

}  // namespace

void Sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
           const float* b, int64_t ldb, float beta, float* c, int64_t ldc, ThreadPool* pool) {
  if (m == 0 || n == 0) return;
  std::vector<float> bt;
  if (trans_b) {  // make B row-major [K, N]
    bt.resize(static_cast<size_t>(k * n));
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p) bt[p * n + j] = b[j * ldb + p];
    b = bt.data();
    ldb = n;
  }
  ThreadPool::For(pool, m, static_cast<double>(n) * static_cast<double>(k) * 2.0, [&](int64_t begin, int64_t end) {
    GemmRows(begin, end, n, k, alpha, a, lda, trans_a, b, ldb, beta, c, ldc);
  });
}

}  // namespace onyx::linalg
