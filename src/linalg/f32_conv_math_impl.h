// Vector activations for the convolution epilogues, written once against the `Vec` of the ISA
// file that includes this (after its simd_<isa>.h). Everything lives in ONYX_SIMD_NS.
#pragma once

#include <cstdint>

#include "linalg/conv.h"

namespace onyx::linalg::ONYX_SIMD_NS {

// exp(x): x = n ln2 + r with |r| <= ln2 / 2, exp(r) by a degree-6 polynomial (about 1 ulp),
// 2^n through the exponent bits. Inputs are clamped so 2^n stays a normal float.
inline Vec Exp(Vec x) {
  x = Vec::Min(Vec::Max(x, Vec::Set1(-87.33654f)), Vec::Set1(88.0f));
  const Vec n = Vec::Round(Vec::Mul(x, Vec::Set1(1.44269504088896341f)));
  Vec r = Vec::Sub(x, Vec::Mul(n, Vec::Set1(0.693359375f)));
  r = Vec::Sub(r, Vec::Mul(n, Vec::Set1(-2.12194440e-4f)));
  Vec p = Vec::Set1(1.9875691500e-4f);
  p = Vec::Fma(p, r, Vec::Set1(1.3981999507e-3f));
  p = Vec::Fma(p, r, Vec::Set1(8.3334519073e-3f));
  p = Vec::Fma(p, r, Vec::Set1(4.1665795894e-2f));
  p = Vec::Fma(p, r, Vec::Set1(1.6666665459e-1f));
  p = Vec::Fma(p, r, Vec::Set1(5.0000001201e-1f));
  p = Vec::Fma(p, Vec::Mul(r, r), Vec::Add(r, Vec::Set1(1.0f)));
  return Vec::Mul(p, Vec::Pow2(n));
}

inline Vec Sigmoid(Vec x) {
  const Vec one = Vec::Set1(1.0f);
  return Vec::Div(one, Vec::Add(one, Exp(Vec::Sub(Vec::Zero(), x))));
}

// The activations past Relu, out of line: their bodies would bloat every epilogue they sit in.
[[gnu::noinline]] static Vec ActivateGeneral(Vec v, const ConvActivation& a) {
  switch (a.kind) {
    case ConvActivation::kNone:
      return v;
    case ConvActivation::kRelu:
      return Vec::Max(v, Vec::Zero());
    case ConvActivation::kClip:
      return Vec::Min(Vec::Max(v, Vec::Set1(a.alpha)), Vec::Set1(a.beta));
    case ConvActivation::kLeakyRelu:  // max(v, 0) + alpha * min(v, 0)
      return Vec::Fma(Vec::Min(v, Vec::Zero()), Vec::Set1(a.alpha), Vec::Max(v, Vec::Zero()));
    case ConvActivation::kHardSigmoid:
      return Vec::Min(Vec::Max(Vec::Fma(v, Vec::Set1(a.alpha), Vec::Set1(a.beta)), Vec::Zero()), Vec::Set1(1.0f));
    case ConvActivation::kSigmoid:
      return Sigmoid(v);
    case ConvActivation::kTanh: {  // 2 sigmoid(2v) - 1
      const Vec s = Sigmoid(Vec::Add(v, v));
      return Vec::Sub(Vec::Add(s, s), Vec::Set1(1.0f));
    }
    case ConvActivation::kSilu:
      return Vec::Mul(v, Sigmoid(v));
    case ConvActivation::kHardSwish: {
      const Vec g = Vec::Fma(v, Vec::Set1(1.0f / 6.0f), Vec::Set1(0.5f));
      return Vec::Mul(v, Vec::Min(Vec::Max(g, Vec::Zero()), Vec::Set1(1.0f)));
    }
  }
  return v;
}

// Relu and Clip (Relu6), the common cheap cases, stay inline in the kernels' epilogues.
[[gnu::always_inline]] inline Vec Activate(Vec v, const ConvActivation& a) {
  if (a.kind == ConvActivation::kRelu) return Vec::Max(v, Vec::Zero());
  if (a.kind == ConvActivation::kClip) return Vec::Min(Vec::Max(v, Vec::Set1(a.alpha)), Vec::Set1(a.beta));
  if (a.kind == ConvActivation::kNone) return v;
  return ActivateGeneral(v, a);
}

inline bool HasActivation(const ConvActivation* a) { return a != nullptr && a->kind != ConvActivation::kNone; }

}  // namespace onyx::linalg::ONYX_SIMD_NS
