// NCHWc pooling and channel-scaling microkernels for one ISA, over its SIMD wrapper S (kLanes floats per vector,
// Zero / Set1 / Load / Store / Add / Mul / Max). Include only from an ISA file, after its
// wrapper; no std:: inline functions here (an AVX copy could be merged with a baseline one).
#pragma once

#include <cstdint>

#include "linalg/pool_nchwc.h"

namespace onyx::linalg {
namespace {

constexpr float kPoolLowest = -3.402823466e+38f;  // std::numeric_limits<float>::lowest()

// acc = max(acc, v) as std::max(acc, v) does: the SIMD max returns its second operand when
// either is NaN, so a NaN accumulator stays and a NaN tap is skipped, like the NCHW kernel.
template <class S, bool kMax>
inline typename S::V Combine(typename S::V acc, typename S::V v) {
  if constexpr (kMax) return S::Max(v, acc);
  else return S::Add(acc, v);
}

template <class S, bool kMax>
void Window(const float* x, int64_t block, int64_t rows, int64_t row_step, int64_t cols, int64_t col_step, float scale,
            float* y) {
  using V = typename S::V;
  for (int64_t c = 0; c < block; c += S::kLanes) {
    V acc0 = kMax ? S::Set1(kPoolLowest) : S::Zero(), acc1 = acc0;
    for (int64_t r = 0; r < rows; ++r) {
      const float* p = x + r * row_step + c;
      int64_t k = 0;
      for (; k + 2 <= cols; k += 2) {  // two chains: the adds' latency, not their count, bounds a row
        acc0 = Combine<S, kMax>(acc0, S::Load(p + k * col_step));
        acc1 = Combine<S, kMax>(acc1, S::Load(p + (k + 1) * col_step));
      }
      if (k < cols) acc0 = Combine<S, kMax>(acc0, S::Load(p + k * col_step));
    }
    V acc = Combine<S, kMax>(acc0, acc1);
    if constexpr (!kMax) acc = S::Mul(acc, S::Set1(scale));
    S::Store(y + c, acc);
  }
}

template <class S, bool kMax>
void Global(const float* x, int64_t pixels, int64_t block, float scale, float* y) {
  using V = typename S::V;
  for (int64_t c = 0; c < block; c += S::kLanes) {
    const V start = kMax ? S::Set1(kPoolLowest) : S::Zero();
    V a0 = start, a1 = start, a2 = start, a3 = start;
    const float* p = x + c;
    int64_t i = 0;
    for (; i + 4 <= pixels; i += 4) {
      a0 = Combine<S, kMax>(a0, S::Load(p + i * block));
      a1 = Combine<S, kMax>(a1, S::Load(p + (i + 1) * block));
      a2 = Combine<S, kMax>(a2, S::Load(p + (i + 2) * block));
      a3 = Combine<S, kMax>(a3, S::Load(p + (i + 3) * block));
    }
    for (; i < pixels; ++i) a0 = Combine<S, kMax>(a0, S::Load(p + i * block));
    V acc = Combine<S, kMax>(Combine<S, kMax>(a0, a1), Combine<S, kMax>(a2, a3));
    if constexpr (!kMax) acc = S::Mul(acc, S::Set1(scale));
    S::Store(y + c, acc);
  }
}

template <class S>
void ScalePixels(const float* x, int64_t pixels, int64_t block, const float* scale, float* y) {
  for (int64_t c = 0; c < block; c += S::kLanes) {
    const typename S::V s = S::Load(scale + c);
    for (int64_t i = 0; i < pixels; ++i) S::Store(y + i * block + c, S::Mul(S::Load(x + i * block + c), s));
  }
}

template <class S>
constexpr NchwcPoolKernels MakePoolNchwcKernels() {
  return NchwcPoolKernels{S::kIsa, S::kLanes, &Window<S, true>, &Window<S, false>, &Global<S, true>, &Global<S, false>,
                          &ScalePixels<S>};
}

}  // namespace
}  // namespace onyx::linalg
