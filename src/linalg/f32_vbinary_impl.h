// Binary arithmetic (add, sub, mul, div, max, min) over arrays and scalars for one ISA, over its
// SIMD wrapper S. Include only from an ISA file, after its wrapper (internal linkage).
#pragma once

#include <cstddef>

#include "linalg/f32_vector_kernels.h"
#include "linalg/vector_math.h"

namespace onyx::linalg {
namespace {

template <class S, BinaryOp kOp>
inline typename S::V ApplyBinary(typename S::V a, typename S::V b) {
  if constexpr (kOp == BinaryOp::kAdd) return S::Add(a, b);
  if constexpr (kOp == BinaryOp::kSub) return S::Sub(a, b);
  if constexpr (kOp == BinaryOp::kMul) return S::Mul(a, b);
  if constexpr (kOp == BinaryOp::kDiv) return S::Div(a, b);
  // The hardware max / min return b when either is NaN; a NaN a is put back.
  if constexpr (kOp == BinaryOp::kMax) return S::Select(S::IsNan(a), a, S::Max(a, b));
  if constexpr (kOp == BinaryOp::kMin) return S::Select(S::IsNan(a), a, S::Min(a, b));
}

// Two vectors per step: enough independent work to hide the load latency of short rows.
template <class S, BinaryOp kOp>
void BinaryVV(const float* a, const float* b, float* y, size_t n) {
  constexpr size_t L = S::kLanes;
  size_t i = 0;
  for (; i + 2 * L <= n; i += 2 * L) {
    const auto r0 = ApplyBinary<S, kOp>(S::Load(a + i), S::Load(b + i));
    const auto r1 = ApplyBinary<S, kOp>(S::Load(a + i + L), S::Load(b + i + L));
    S::Store(y + i, r0);
    S::Store(y + i + L, r1);
  }
  for (; i + L <= n; i += L) S::Store(y + i, ApplyBinary<S, kOp>(S::Load(a + i), S::Load(b + i)));
  if (i < n) S::StoreN(y + i, ApplyBinary<S, kOp>(S::LoadN(a + i, n - i), S::LoadN(b + i, n - i)), n - i);
}

// One operand is a scalar: kScalarFirst ? s op x[i] : x[i] op s.
template <class S, BinaryOp kOp, bool kScalarFirst>
void BinaryScalar(const float* x, float s, float* y, size_t n) {
  constexpr size_t L = S::kLanes;
  const auto v = S::Set1(s);
  auto apply = [&](typename S::V u) { return kScalarFirst ? ApplyBinary<S, kOp>(v, u) : ApplyBinary<S, kOp>(u, v); };
  size_t i = 0;
  for (; i + 2 * L <= n; i += 2 * L) {
    const auto r0 = apply(S::Load(x + i));
    const auto r1 = apply(S::Load(x + i + L));
    S::Store(y + i, r0);
    S::Store(y + i + L, r1);
  }
  for (; i + L <= n; i += L) S::Store(y + i, apply(S::Load(x + i)));
  if (i < n) S::StoreN(y + i, apply(S::LoadN(x + i, n - i)), n - i);
}

template <class S>
void DispatchVV(int op, const float* a, const float* b, float* y, size_t n) {
  switch (static_cast<BinaryOp>(op)) {
    case BinaryOp::kAdd:
      return BinaryVV<S, BinaryOp::kAdd>(a, b, y, n);
    case BinaryOp::kSub:
      return BinaryVV<S, BinaryOp::kSub>(a, b, y, n);
    case BinaryOp::kMul:
      return BinaryVV<S, BinaryOp::kMul>(a, b, y, n);
    case BinaryOp::kDiv:
      return BinaryVV<S, BinaryOp::kDiv>(a, b, y, n);
    case BinaryOp::kMax:
      return BinaryVV<S, BinaryOp::kMax>(a, b, y, n);
    case BinaryOp::kMin:
      return BinaryVV<S, BinaryOp::kMin>(a, b, y, n);
  }
}

template <class S, bool kScalarFirst>
void DispatchScalar(int op, const float* x, float s, float* y, size_t n) {
  switch (static_cast<BinaryOp>(op)) {
    case BinaryOp::kAdd:
      return BinaryScalar<S, BinaryOp::kAdd, kScalarFirst>(x, s, y, n);
    case BinaryOp::kSub:
      return BinaryScalar<S, BinaryOp::kSub, kScalarFirst>(x, s, y, n);
    case BinaryOp::kMul:
      return BinaryScalar<S, BinaryOp::kMul, kScalarFirst>(x, s, y, n);
    case BinaryOp::kDiv:
      return BinaryScalar<S, BinaryOp::kDiv, kScalarFirst>(x, s, y, n);
    case BinaryOp::kMax:
      return BinaryScalar<S, BinaryOp::kMax, kScalarFirst>(x, s, y, n);
    case BinaryOp::kMin:
      return BinaryScalar<S, BinaryOp::kMin, kScalarFirst>(x, s, y, n);
  }
}

template <class S>
void DispatchVS(int op, const float* a, float b, float* y, size_t n) {
  DispatchScalar<S, false>(op, a, b, y, n);
}

template <class S>
void DispatchSV(int op, float a, const float* b, float* y, size_t n) {
  DispatchScalar<S, true>(op, b, a, y, n);
}

template <class S>
constexpr F32VBinaryKernels MakeVBinaryKernels() {
  return {S::kIsa, &DispatchVV<S>, &DispatchVS<S>, &DispatchSV<S>};
}

}  // namespace
}  // namespace onyx::linalg
