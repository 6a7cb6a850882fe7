// Pieces shared by Conv, ConvTranspose and DeformConv: the GEMM they run on (linalg::Sgemm for
// float; a plain row-parallel loop keeps double in double) and conversions between a tensor's
// element type and the type the kernels compute in (float16/bfloat16 compute in float).
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "base/type_traits.h"
#include "linalg/gemm.h"
#include "platform/thread_pool.h"
#include "providers/kernel.h"

namespace onyx::nn {

// C[m,n] = A[m,k] * B[k,n] (+ C when accumulate), all row-major.
template <typename C>
void GemmNN(int64_t m, int64_t n, int64_t k, const C* a, int64_t lda, const C* b, int64_t ldb, bool accumulate, C* c,
            int64_t ldc, ThreadPool* pool) {
  if (m == 0 || n == 0) return;
  if constexpr (std::is_same_v<C, float>) {
    linalg::Sgemm(false, false, m, n, k, 1.0f, a, lda, b, ldb, accumulate ? 1.0f : 0.0f, c, ldc, pool);
  } else {
    ThreadPool::For(pool, m, 2.0 * static_cast<double>(n) * static_cast<double>(k), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        C* crow = c + i * ldc;
        if (!accumulate) std::fill(crow, crow + n, C{});
        for (int64_t p = 0; p < k; ++p) {
          const C av = a[i * lda + p];
          const C* brow = b + p * ldb;
          for (int64_t j = 0; j < n; ++j) crow[j] += av * brow[j];
        }
      }
    });
  }
}

// Calls one(n, group, col, pool) for every image n and group of an im2col-style convolution:
// in parallel over them when the groups alone give every thread work (each part with its own
// col buffer and single-threaded GEMMs), else in turn, with the pool inside each GEMM.
// cost is one call's work (twice its multiply-adds).
template <typename C, typename One>
void ForEachImageGroup(int64_t batch, int64_t groups, double cost, ThreadPool* pool, const One& one) {
  const int64_t jobs = batch * groups;
  const int threads = pool != nullptr ? pool->num_threads() : 1;
  if (groups > 1 && jobs >= threads) {
    ThreadPool::For(pool, jobs, cost, [&](int64_t begin, int64_t end) {
      std::vector<C> col;
      for (int64_t j = begin; j < end; ++j) one(j / groups, j % groups, col, nullptr);
    });
  } else {
    std::vector<C> col;
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t g = 0; g < groups; ++g) one(n, g, col, pool);
  }
}

// The tensor's elements as compute type C: a view when T is C, else converted into `storage`.
template <typename T, typename C>
const C* ComputeView(const Tensor& t, std::vector<C>& storage) {
  if constexpr (std::is_same_v<T, C>) {
    return t.data<C>();
  } else {
    const T* src = t.data<T>();
    storage.resize(static_cast<size_t>(t.size()));
    for (int64_t i = 0; i < t.size(); ++i) storage[i] = ToCompute(src[i]);
    return storage.data();
  }
}

// Where a kernel writes an output of element type T in compute type C: the tensor itself when T
// is C, else `storage`, to be stored back with StoreFromCompute.
template <typename T, typename C>
C* ComputeOutput(Tensor& t, std::vector<C>& storage) {
  if constexpr (std::is_same_v<T, C>) {
    return t.data<C>();
  } else {
    storage.resize(static_cast<size_t>(t.size()));
    return storage.data();
  }
}

// A tensor converted once to its compute type (float for float16/bfloat16; float and double
// are shared, not copied). Undefined for other element types.
inline Tensor ToComputeTensor(const Tensor& t) {
  if (t.dtype() == DataType::kFloat || t.dtype() == DataType::kDouble) return t;
  Tensor out;
  TryDispatch(TypeList<Float16, BFloat16>{}, t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    out = Tensor(DataType::kFloat, t.shape());
    const T* src = t.data<T>();
    float* dst = out.data<float>();
    for (int64_t i = 0; i < t.size(); ++i) dst[i] = static_cast<float>(src[i]);
  });
  return out;
}

// Writes compute-type values into an output tensor of element type T.
template <typename T, typename C>
void StoreFromCompute(const C* src, int64_t count, T* dst) {
  if constexpr (std::is_same_v<T, C>) {
    if (src != dst) std::copy(src, src + count, dst);
  } else {
    for (int64_t i = 0; i < count; ++i) dst[i] = FromCompute<T>(src[i]);
  }
}

}  // namespace onyx::nn
