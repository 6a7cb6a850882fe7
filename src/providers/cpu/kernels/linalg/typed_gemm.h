// Row-major C = alpha * op(A) * op(B) + beta * C for every MatMul/Gemm element type.
// float runs on linalg::Sgemm; float16/bfloat16 widen to float, run Sgemm and round once;
// double accumulates in double; integers accumulate with wrapping 64-bit arithmetic.
// Shared by the kernels of this folder (MatMul, Gemm, Einsum).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "base/type_traits.h"
#include "linalg/gemm.h"
#include "platform/thread_pool.h"
#include "providers/kernel_variant.h"

namespace onyx::linalg_kernels {

using GemmTypes = TypeList<float, double, Float16, BFloat16, int32_t, int64_t, uint32_t, uint64_t>;

// The path TypedGemm<T> takes for the profile: the SGEMM's few-columns path (on `isa`) or its
// blocked microkernel, or plain loops; the strings must outlive the call (the kernel's own).
template <typename T>
KernelVariant TypedGemmVariant(bool trans_a, int64_t n, int64_t k, const std::string& microkernel,
                               const std::string& isa) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    if (linalg::SgemmTakesFewColumnsPath(trans_a, n, k)) return {"gemm few columns (N <= 4)", isa.c_str()};
    return {"gemm blocked", microkernel.c_str()};
  } else if constexpr (std::is_integral_v<T>) {
    return {"row loops in 64-bit integers", "scalar"};
  } else {
    return {"row loops in double", "scalar"};
  }
}

// beta == 0 means C is write-only.
template <typename T>
void TypedGemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const T* a, int64_t lda,
               const T* b, int64_t ldb, float beta, T* c, int64_t ldc, ThreadPool* pool) {
  if (m == 0 || n == 0) return;
  if constexpr (std::is_same_v<T, float>) {
    linalg::Sgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, pool);
  } else if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    const int64_t a_rows = trans_a ? k : m, b_rows = trans_b ? n : k;
    const int64_t a_cols = trans_a ? m : k, b_cols = trans_b ? k : n;
    std::vector<float> fa(static_cast<size_t>(a_rows * a_cols)), fb(static_cast<size_t>(b_rows * b_cols));
    std::vector<float> fc(static_cast<size_t>(m * n));
    for (int64_t i = 0; i < a_rows; ++i)
      for (int64_t j = 0; j < a_cols; ++j) fa[i * a_cols + j] = static_cast<float>(a[i * lda + j]);
    for (int64_t i = 0; i < b_rows; ++i)
      for (int64_t j = 0; j < b_cols; ++j) fb[i * b_cols + j] = static_cast<float>(b[i * ldb + j]);
    if (beta != 0.0f)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) fc[i * n + j] = static_cast<float>(c[i * ldc + j]);
    linalg::Sgemm(trans_a, trans_b, m, n, k, alpha, fa.data(), a_cols, fb.data(), b_cols, beta, fc.data(), n, pool);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = T(fc[i * n + j]);
  } else {
    using A = std::conditional_t<std::is_integral_v<T>, uint64_t, double>;
    ThreadPool::For(pool, m, static_cast<double>(n) * static_cast<double>(k) * 2.0, [&](int64_t begin, int64_t end) {
      std::vector<A> acc(static_cast<size_t>(n));
      for (int64_t i = begin; i < end; ++i) {
        std::fill(acc.begin(), acc.end(), A(0));
        for (int64_t p = 0; p < k; ++p) {
          const A av = static_cast<A>(trans_a ? a[p * lda + i] : a[i * lda + p]);
          if (trans_b) {
            for (int64_t j = 0; j < n; ++j) acc[j] += av * static_cast<A>(b[j * ldb + p]);
          } else {
            const T* brow = b + p * ldb;
            for (int64_t j = 0; j < n; ++j) acc[j] += av * static_cast<A>(brow[j]);
          }
        }
        T* crow = c + i * ldc;
        for (int64_t j = 0; j < n; ++j) {
          if constexpr (std::is_integral_v<T>) {
            // Exact integer arithmetic for the usual alpha = 1, beta in {0, 1}; scaled in double otherwise.
            const T prod = static_cast<T>(acc[j]);
            if (alpha == 1.0f && (beta == 0.0f || beta == 1.0f)) {
              crow[j] =
                  beta == 0.0f ? prod : static_cast<T>(static_cast<uint64_t>(prod) + static_cast<uint64_t>(crow[j]));
            } else {
              const double v = static_cast<double>(alpha) * static_cast<double>(prod) +
                               (beta == 0.0f ? 0.0 : static_cast<double>(beta) * static_cast<double>(crow[j]));
              crow[j] = static_cast<T>(static_cast<int64_t>(v));
            }
          } else {
            crow[j] = static_cast<T>(alpha * acc[j] + (beta == 0.0f ? 0.0 : beta * crow[j]));
          }
        }
      }
    });
  }
}

}  // namespace onyx::linalg_kernels
