// Reductions of contiguous runs (sum, sum of squares, sum of |x|, max, min) and their
// across-rows forms (a row folded into per-column accumulators) for one ISA, over its SIMD
// wrapper S. Sums accumulate in double: the float lanes are widened before every add, so long
// runs lose nothing to the accumulator. Include only from an ISA file, after its wrapper; no
// std:: inline functions here (an AVX copy could be merged with a baseline one).
#pragma once

#include <cstddef>

#include "linalg/f32_vector_kernels.h"

namespace onyx::linalg {
namespace {

enum class SumKind { kPlain, kSquares, kAbs };

// acc += v (or v^2, |v|) for a vector of doubles.
template <class S, SumKind kKind>
inline typename S::D AddTerm(typename S::D acc, typename S::D v) {
  if constexpr (kKind == SumKind::kSquares) return S::FmaD(v, v, acc);  // squares in double: exact
  if constexpr (kKind == SumKind::kAbs) return S::AddD(acc, S::AbsD(v));
  if constexpr (kKind == SumKind::kPlain) return S::AddD(acc, v);
}

// Half-vectors of floats are loaded straight into double lanes (no shuffles); four chains hide
// the latency of the double adds.
template <class S, SumKind kKind>
double SumRun(const float* x, size_t n) {
  constexpr size_t H = S::kLanes / 2;
  typename S::D a0 = S::ZeroD(), a1 = S::ZeroD(), a2 = S::ZeroD(), a3 = S::ZeroD();
  size_t i = 0;
  for (; i + 4 * H <= n; i += 4 * H) {
    a0 = AddTerm<S, kKind>(a0, S::LoadWide(x + i));
    a1 = AddTerm<S, kKind>(a1, S::LoadWide(x + i + H));
    a2 = AddTerm<S, kKind>(a2, S::LoadWide(x + i + 2 * H));
    a3 = AddTerm<S, kKind>(a3, S::LoadWide(x + i + 3 * H));
  }
  for (; i + H <= n; i += H) a0 = AddTerm<S, kKind>(a0, S::LoadWide(x + i));
  if (i < n) a1 = AddTerm<S, kKind>(a1, S::LoadWideN(x + i, n - i));  // the missing lanes add 0
  return S::ReduceAddD(S::AddD(S::AddD(a0, a1), S::AddD(a2, a3)));
}

// Max / min ignoring NaN in the vector loop, with a separate NaN flag: a NaN anywhere wins.
template <class S, bool kMax>
float ExtremumRun(const float* x, size_t n) {
  constexpr size_t L = S::kLanes;
  constexpr float kStart = kMax ? -__builtin_inff() : __builtin_inff();
  using V = typename S::V;
  V a0 = S::Set1(kStart), a1 = a0;
  auto nan = S::IsNan(a0);
  auto step = [&](V& acc, V v) {
    nan = S::Or(nan, S::IsNan(v));
    acc = kMax ? S::Max(v, acc) : S::Min(v, acc);
  };
  size_t i = 0;
  for (; i + 2 * L <= n; i += 2 * L) {
    step(a0, S::Load(x + i));
    step(a1, S::Load(x + i + L));
  }
  if (i + L <= n) {
    step(a0, S::Load(x + i));
    i += L;
  }
  if (i < n) step(a1, S::LoadN(x + i, n - i, kStart));
  if (S::Any(nan)) return __builtin_nanf("");
  return kMax ? S::ReduceMax(S::Max(a0, a1)) : S::ReduceMin(S::Min(a0, a1));
}

// acc[i] += x[i] (or x[i]^2, |x[i]|) in double.
template <class S, SumKind kKind>
void AccumulateRun(const float* x, double* acc, size_t n) {
  constexpr size_t H = S::kLanes / 2;
  size_t i = 0;
  for (; i + 2 * H <= n; i += 2 * H) {
    const typename S::D r0 = AddTerm<S, kKind>(S::LoadD(acc + i), S::LoadWide(x + i));
    const typename S::D r1 = AddTerm<S, kKind>(S::LoadD(acc + i + H), S::LoadWide(x + i + H));
    S::StoreD(acc + i, r0);
    S::StoreD(acc + i + H, r1);
  }
  for (; i < n; ++i) {
    const double v = x[i];
    acc[i] += kKind == SumKind::kSquares ? v * v : (kKind == SumKind::kAbs ? __builtin_fabs(v) : v);
  }
}

// acc[i] = max(acc[i], x[i]) (or min); a NaN in either stays.
template <class S, bool kMax>
void AccumulateExtremum(const float* x, float* acc, size_t n) {
  constexpr size_t L = S::kLanes;
  using V = typename S::V;
  auto apply = [](V a, V v) {
    const V r = kMax ? S::Max(a, v) : S::Min(a, v);  // v when either is NaN
    return S::Select(S::IsNan(a), a, r);
  };
  size_t i = 0;
  for (; i + L <= n; i += L) S::Store(acc + i, apply(S::Load(acc + i), S::Load(x + i)));
  if (i < n) S::StoreN(acc + i, apply(S::LoadN(acc + i, n - i), S::LoadN(x + i, n - i)), n - i);
}

template <class S>
constexpr F32ReduceKernels MakeReduceKernels() {
  return {S::kIsa,
          &SumRun<S, SumKind::kPlain>,
          &SumRun<S, SumKind::kSquares>,
          &SumRun<S, SumKind::kAbs>,
          &ExtremumRun<S, true>,
          &ExtremumRun<S, false>,
          &AccumulateRun<S, SumKind::kPlain>,
          &AccumulateRun<S, SumKind::kSquares>,
          &AccumulateRun<S, SumKind::kAbs>,
          &AccumulateExtremum<S, true>,
          &AccumulateExtremum<S, false>};
}

}  // namespace
}  // namespace onyx::linalg
