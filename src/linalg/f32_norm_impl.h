// Layer normalization and RMS normalization of one row for one ISA, over its SIMD wrapper S.
// Pass one gathers the sum and the sum of squares in double (so E[x^2] - E[x]^2 keeps its
// digits when the mean is large next to the spread); pass two normalizes, scales and shifts.
// Include only from an ISA file, after its wrapper (internal linkage; no std:: inline calls).
#pragma once

#include <cstddef>

#include "linalg/f32_vector_kernels.h"

namespace onyx::linalg {
namespace {

template <class S, bool kWithSum>
inline void Moments(const float* x, size_t n, double& sum, double& sum_sq) {
  constexpr size_t H = S::kLanes / 2;
  using D = typename S::D;
  // Half-vectors of floats load straight into double lanes; four chains each for the sum and
  // the squares hide the latency of the double adds.
  D s[4] = {S::ZeroD(), S::ZeroD(), S::ZeroD(), S::ZeroD()};
  D q[4] = {S::ZeroD(), S::ZeroD(), S::ZeroD(), S::ZeroD()};
  auto add = [&](D v, int k) {
    if constexpr (kWithSum) s[k] = S::AddD(s[k], v);
    q[k] = S::FmaD(v, v, q[k]);
  };
  size_t i = 0;
  for (; i + 4 * H <= n; i += 4 * H) {
    add(S::LoadWide(x + i), 0);
    add(S::LoadWide(x + i + H), 1);
    add(S::LoadWide(x + i + 2 * H), 2);
    add(S::LoadWide(x + i + 3 * H), 3);
  }
  for (; i + H <= n; i += H) add(S::LoadWide(x + i), 0);
  if (i < n) add(S::LoadWideN(x + i, n - i), 1);  // the missing lanes add 0
  sum = kWithSum ? S::ReduceAddD(S::AddD(S::AddD(s[0], s[1]), S::AddD(s[2], s[3]))) : 0.0;
  sum_sq = S::ReduceAddD(S::AddD(S::AddD(q[0], q[1]), S::AddD(q[2], q[3])));
}

// y = (x - mean) * inv * scale (+ bias); null scale means 1. The mean comes as hi + lo: x - hi
// is exact for x near the mean, so a large mean costs no digits of the deviation.
template <class S>
inline void Affine(const float* x, float* y, size_t n, float mean_hi, float mean_lo, float inv, const float* scale,
                   const float* bias) {
  constexpr size_t L = S::kLanes;
  using V = typename S::V;
  // (x - hi - lo) * inv = (x - hi) * inv - lo * inv: one fused step after the exact subtraction.
  const V m = S::Set1(mean_hi), k = S::Set1(inv), lo_k = S::Set1(-mean_lo * inv);
  auto one = [&](size_t i, size_t count) {
    const bool full = count == L;
    const V v = S::Fma(S::Sub(full ? S::Load(x + i) : S::LoadN(x + i, count), m), k, lo_k);
    const V w = scale == nullptr ? S::Set1(1.0f) : (full ? S::Load(scale + i) : S::LoadN(scale + i, count));
    const V b = bias == nullptr ? S::Zero() : (full ? S::Load(bias + i) : S::LoadN(bias + i, count));
    const V r = S::Fma(v, w, b);
    if (full)
      S::Store(y + i, r);
    else
      S::StoreN(y + i, r, count);
  };
  size_t i = 0;
  for (; i + L <= n; i += L) one(i, L);
  if (i < n) one(i, n - i);
}

template <class S>
void LayerNormRowImpl(const float* x, float* y, size_t n, const float* scale, const float* bias, float epsilon,
                      float* mean_out, float* inv_out) {
  double sum, sum_sq;
  Moments<S, true>(x, n, sum, sum_sq);
  const double count = static_cast<double>(n);
  const double mean = sum / count;
  double var = sum_sq / count - mean * mean;
  var = var > 0.0 ? var : 0.0;
  const double inv = 1.0 / __builtin_sqrt(var + static_cast<double>(epsilon));
  const float mean_hi = static_cast<float>(mean);
  Affine<S>(x, y, n, mean_hi, static_cast<float>(mean - mean_hi), static_cast<float>(inv), scale, bias);
  if (mean_out != nullptr) *mean_out = static_cast<float>(mean);
  if (inv_out != nullptr) *inv_out = static_cast<float>(inv);
}

template <class S>
void RmsNormRowImpl(const float* x, float* y, size_t n, const float* scale, float epsilon, float* inv_out) {
  double sum, sum_sq;
  Moments<S, false>(x, n, sum, sum_sq);
  const double inv = 1.0 / __builtin_sqrt(sum_sq / static_cast<double>(n) + static_cast<double>(epsilon));
  Affine<S>(x, y, n, 0.0f, 0.0f, static_cast<float>(inv), scale, nullptr);
  if (inv_out != nullptr) *inv_out = static_cast<float>(inv);
}

template <class S>
constexpr F32NormKernels MakeNormKernels() {
  return {S::kIsa, &LayerNormRowImpl<S>, &RmsNormRowImpl<S>};
}

}  // namespace
}  // namespace onyx::linalg
