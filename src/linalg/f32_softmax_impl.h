// Softmax and log-softmax of contiguous rows and along the first axis of [n, inner] blocks for
// one ISA, over its SIMD wrapper S. Three passes: max, exp-and-sum (softmax stores the exps),
// scale. Include only from an ISA file, after its wrapper (internal linkage).
#pragma once

#include <cstddef>

#include "linalg/f32_vector_kernels.h"
#include "linalg/f32_vmath_impl.h"

namespace onyx::linalg {
namespace {

// The row's max, NaN ignored (a NaN still makes every output NaN through the sum).
template <class S>
float RowMax(const float* x, size_t n) {
  constexpr size_t L = S::kLanes;
  typename S::V m0 = S::Set1(-kInf), m1 = m0;
  size_t i = 0;
  for (; i + 2 * L <= n; i += 2 * L) {
    m0 = S::Max(S::Load(x + i), m0);
    m1 = S::Max(S::Load(x + i + L), m1);
  }
  for (; i + L <= n; i += L) m0 = S::Max(S::Load(x + i), m0);
  if (i < n) m1 = S::Max(S::LoadN(x + i, n - i, -kInf), m1);
  return S::ReduceMax(S::Max(m0, m1));
}

// exp(x) for x <= 0 (a value less its max). x / ln2 is rounded to the integer n by adding and
// subtracting 1.5 * 2^23: two ops on either FMA port, where Exp<S>'s multiply and round take a
// port-0-only round on AVX-512 cores; and no upper clamp. The same values as Exp<S> (n differs
// only when x / ln2 is within an ulp of a half-integer, and then by one, the reduction staying
// exact). ViT-tiny's 591 score rows of 197: 84.5 -> 80.2 us (loaded Xeon, alternated runs).
template <class S>
inline typename S::V ExpNonPositive(typename S::V x) {
  using V = typename S::V;
  x = S::Max(S::Set1(-104.0f), x);        // exp(-inf) = 0; NaN passes (the second operand)
  const V shifter = S::Set1(12582912.0f);  // 1.5 * 2^23
  const V n = S::Sub(S::Fma(x, S::Set1(kLog2e), shifter), shifter);
  V r = S::Fnma(n, S::Set1(kLn2Hi), x);
  r = S::Fnma(n, S::Set1(kLn2Lo), r);
  const V p = S::Fma(S::Mul(r, r), Poly<S>(r, kExpP), r);
  return S::Scale2(S::Add(p, S::Set1(1.0f)), n);
}

// sum of exp(x[i] - max); kStore also writes each exp to y.
template <class S, bool kStore>
float ExpSum(const float* x, float* y, size_t n, float max) {
  constexpr size_t L = S::kLanes;
  const typename S::V m = S::Set1(max);
  typename S::V s0 = S::Zero(), s1 = S::Zero();
  size_t i = 0;
  for (; i + 2 * L <= n; i += 2 * L) {
    const typename S::V e0 = ExpNonPositive<S>(S::Sub(S::Load(x + i), m));
    const typename S::V e1 = ExpNonPositive<S>(S::Sub(S::Load(x + i + L), m));
    if constexpr (kStore) S::Store(y + i, e0), S::Store(y + i + L, e1);
    s0 = S::Add(s0, e0);
    s1 = S::Add(s1, e1);
  }
  for (; i + L <= n; i += L) {
    const typename S::V e = ExpNonPositive<S>(S::Sub(S::Load(x + i), m));
    if constexpr (kStore) S::Store(y + i, e);
    s0 = S::Add(s0, e);
  }
  if (i < n) {
    const typename S::V e = ExpNonPositive<S>(S::Sub(S::LoadN(x + i, n - i, -kInf), m));  // missing lanes: exp(-inf) = 0
    if constexpr (kStore) S::StoreN(y + i, e, n - i);
    s1 = S::Add(s1, e);
  }
  return S::ReduceAdd(S::Add(s0, s1));
}

template <class S>
void SoftmaxRowImpl(const float* x, float* y, size_t n) {
  constexpr size_t L = S::kLanes;
  const float max = RowMax<S>(x, n);
  const typename S::V scale = S::Set1(1.0f / ExpSum<S, true>(x, y, n, max));
  size_t i = 0;
  for (; i + L <= n; i += L) S::Store(y + i, S::Mul(S::Load(y + i), scale));
  if (i < n) S::StoreN(y + i, S::Mul(S::LoadN(y + i, n - i), scale), n - i);
}

// y = (x - max) - log(sum exp(x - max)).
template <class S>
void LogSoftmaxRowImpl(const float* x, float* y, size_t n) {
  constexpr size_t L = S::kLanes;
  const float max = RowMax<S>(x, n);
  const float sum = ExpSum<S, false>(x, nullptr, n, max);
  // One value: libm's logf has a far shorter latency than a vector Log of one lane.
  const float log_sum = __builtin_logf(sum);
  const typename S::V m = S::Set1(max), l = S::Set1(log_sum);
  size_t i = 0;
  for (; i + L <= n; i += L) S::Store(y + i, S::Sub(S::Sub(S::Load(x + i), m), l));
  if (i < n) S::StoreN(y + i, S::Sub(S::Sub(S::LoadN(x + i, n - i), m), l), n - i);
}

// Applies f(j, count) to the column ranges [j, j + count) of a row of `inner`, count <= L.
template <class S, typename F>
inline void ForColumns(size_t inner, F&& f) {
  constexpr size_t L = S::kLanes;
  size_t j = 0;
  for (; j + L <= inner; j += L) f(j, L);
  if (j < inner) f(j, inner - j);
}

template <class S>
inline typename S::V LoadCols(const float* p, size_t count) {
  return count == S::kLanes ? S::Load(p) : S::LoadN(p, count);
}
template <class S>
inline void StoreCols(float* p, typename S::V v, size_t count) {
  if (count == S::kLanes)
    S::Store(p, v);
  else
    S::StoreN(p, v, count);
}

// Softmax (or log-softmax) of every column of an [n, inner] block; scratch: max and sum rows.
template <class S, bool kLog>
void SoftmaxColumnsImpl(const float* x, float* y, size_t n, size_t inner, float* scratch) {
  using V = typename S::V;
  float* max = scratch;
  float* sum = scratch + inner;
  ForColumns<S>(inner, [&](size_t j, size_t c) {
    V m = LoadCols<S>(x + j, c);
    for (size_t i = 1; i < n; ++i) m = S::Max(LoadCols<S>(x + i * inner + j, c), m);
    StoreCols<S>(max + j, m, c);
    StoreCols<S>(sum + j, S::Zero(), c);
  });
  for (size_t i = 0; i < n; ++i) {
    ForColumns<S>(inner, [&](size_t j, size_t c) {
      const V e = ExpNonPositive<S>(S::Sub(LoadCols<S>(x + i * inner + j, c), LoadCols<S>(max + j, c)));
      if constexpr (!kLog) StoreCols<S>(y + i * inner + j, e, c);
      StoreCols<S>(sum + j, S::Add(LoadCols<S>(sum + j, c), e), c);
    });
  }
  ForColumns<S>(inner, [&](size_t j, size_t c) {
    const V s = LoadCols<S>(sum + j, c);
    StoreCols<S>(sum + j, kLog ? Log<S>(s) : S::Div(S::Set1(1.0f), s), c);
  });
  for (size_t i = 0; i < n; ++i) {
    ForColumns<S>(inner, [&](size_t j, size_t c) {
      const V s = LoadCols<S>(sum + j, c);
      if constexpr (kLog) {
        const V v = S::Sub(LoadCols<S>(x + i * inner + j, c), LoadCols<S>(max + j, c));
        StoreCols<S>(y + i * inner + j, S::Sub(v, s), c);
      } else {
        StoreCols<S>(y + i * inner + j, S::Mul(LoadCols<S>(y + i * inner + j, c), s), c);
      }
    });
  }
}

template <class S>
constexpr F32SoftmaxKernels MakeSoftmaxKernels() {
  return {S::kIsa, &SoftmaxRowImpl<S>, &LogSoftmaxRowImpl<S>, &SoftmaxColumnsImpl<S, false>,
          &SoftmaxColumnsImpl<S, true>};
}

}  // namespace
}  // namespace onyx::linalg
