// Row-major matrix product in a kernel's compute type (float or double), shared by the
// recurrent and attention kernels: float goes to linalg::Sgemm (where the SIMD GEMM lands),
// double to a plain blocked loop.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "base/type_traits.h"
#include "linalg/gemm.h"
#include "platform/thread_pool.h"

namespace onyx::compute {

// C[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * C; beta == 0 makes C write-only.
template <typename C>
void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, C alpha, const C* a, int64_t lda, const C* b,
          int64_t ldb, C beta, C* c, int64_t ldc, ThreadPool* pool) {
  if constexpr (std::is_same_v<C, float>) {
    linalg::Sgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, pool);
  } else {
    if (m == 0 || n == 0) return;
    ThreadPool::For(pool, m, static_cast<double>(n) * static_cast<double>(k) * 2.0, [&](int64_t begin, int64_t end) {
      std::vector<C> acc(static_cast<size_t>(n));
      for (int64_t i = begin; i < end; ++i) {
        std::fill(acc.begin(), acc.end(), C(0));
        for (int64_t p = 0; p < k; ++p) {
          const C av = trans_a ? a[p * lda + i] : a[i * lda + p];
          if (trans_b) {
            for (int64_t j = 0; j < n; ++j) acc[j] += av * b[j * ldb + p];
          } else {
            const C* brow = b + p * ldb;
            for (int64_t j = 0; j < n; ++j) acc[j] += av * brow[j];
          }
        }
        C* crow = c + i * ldc;
        for (int64_t j = 0; j < n; ++j) crow[j] = alpha * acc[j] + (beta == C(0) ? C(0) : beta * crow[j]);
      }
    });
  }
}

// Copies n elements of any float-like type into the compute type.
template <typename T, typename Cp>
void ToComputeArray(const T* src, int64_t n, Cp* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<Cp>(ToCompute(src[i]));
}

template <typename T, typename Cp>
void FromComputeArray(const Cp* src, int64_t n, T* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = FromCompute<T>(static_cast<ComputeType<T>>(src[i]));
}

}  // namespace onyx::compute
