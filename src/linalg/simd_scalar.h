// The portable 8-float "vector" for the baseline convolution kernels: plain loops the compiler
// may map onto SSE2, no AVX. Same interface as simd_avx2.h.
#pragma once

#include <cmath>
#include <cstdint>

#define ONYX_SIMD_NS scalar

namespace onyx::linalg::scalar {

struct Vec {
  static constexpr int kWidth = 8;
  float v[kWidth];

  static Vec Zero() { return Set1(0.0f); }
  static Vec Set1(float x) {
    Vec r;
    for (int i = 0; i < kWidth; ++i) r.v[i] = x;
    return r;
  }
  static Vec Load(const float* p) {
    Vec r;
    for (int i = 0; i < kWidth; ++i) r.v[i] = p[i];
    return r;
  }
  static Vec LoadPartial(const float* p, int64_t n) {
    Vec r = Zero();
    for (int64_t i = 0; i < n; ++i) r.v[i] = p[i];
    return r;
  }
  struct LaneMask {
    int64_t lo, hi;
  };
  static LaneMask RangeMask(int64_t lo, int64_t hi) { return {lo, hi}; }
  static Vec LoadMasked(const float* p, LaneMask m) {
    Vec r = Zero();
    for (int64_t i = m.lo; i < m.hi; ++i) r.v[i] = p[i];
    return r;
  }
  static void Store(float* p, Vec a) {
    for (int i = 0; i < kWidth; ++i) p[i] = a.v[i];
  }
  static void StorePartial(float* p, Vec a, int64_t n) {
    for (int64_t i = 0; i < n; ++i) p[i] = a.v[i];
  }
  static Vec Fma(Vec a, Vec b, Vec c) {
    for (int i = 0; i < kWidth; ++i) c.v[i] += a.v[i] * b.v[i];
    return c;
  }
  static Vec Add(Vec a, Vec b) {
    for (int i = 0; i < kWidth; ++i) a.v[i] += b.v[i];
    return a;
  }
  static Vec Sub(Vec a, Vec b) {
    for (int i = 0; i < kWidth; ++i) a.v[i] -= b.v[i];
    return a;
  }
  static Vec Mul(Vec a, Vec b) {
    for (int i = 0; i < kWidth; ++i) a.v[i] *= b.v[i];
    return a;
  }
  static Vec Max(Vec a, Vec b) {
    for (int i = 0; i < kWidth; ++i) a.v[i] = a.v[i] > b.v[i] ? a.v[i] : b.v[i];
    return a;
  }
  static Vec Min(Vec a, Vec b) {
    for (int i = 0; i < kWidth; ++i) a.v[i] = a.v[i] < b.v[i] ? a.v[i] : b.v[i];
    return a;
  }
  static Vec Reciprocal(Vec a) {
    for (int i = 0; i < kWidth; ++i) a.v[i] = 1.0f / a.v[i];
    return a;
  }
  static Vec Round(Vec a) {
    for (int i = 0; i < kWidth; ++i) a.v[i] = std::nearbyint(a.v[i]);
    return a;
  }
  static Vec Scale2(Vec p, Vec n) {
    for (int i = 0; i < kWidth; ++i) p.v[i] = std::ldexp(p.v[i], static_cast<int>(n.v[i]));
    return p;
  }
  static Vec LoadEven(const float* p) {
    Vec r;
    for (int i = 0; i < kWidth; ++i) r.v[i] = p[2 * i];
    return r;
  }
  static Vec LoadEvenMasked(const float* p, LaneMask m0, LaneMask m1) {
    Vec r = Zero();
    for (int i = 0; i < kWidth; ++i) {
      const int64_t j = 2 * i;  // element j: first half lanes [m0.lo, m0.hi), second half m1
      const bool in = j < kWidth ? (j >= m0.lo && j < m0.hi) : (j - kWidth >= m1.lo && j - kWidth < m1.hi);
      if (in) r.v[i] = p[j];
    }
    return r;
  }
  static void Deinterleave2(const float* p, Vec& even, Vec& odd) {
    for (int i = 0; i < kWidth; ++i) {
      even.v[i] = p[2 * i];
      odd.v[i] = p[2 * i + 1];
    }
  }
  static void Transpose(Vec* r) {
    for (int i = 0; i < kWidth; ++i)
      for (int j = i + 1; j < kWidth; ++j) {
        const float t = r[i].v[j];
        r[i].v[j] = r[j].v[i];
        r[j].v[i] = t;
      }
  }
};

}  // namespace onyx::linalg::scalar
