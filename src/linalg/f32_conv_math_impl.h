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

inline Vec Relu(Vec v) { return Vec::Max(v, Vec::Zero()); }
inline Vec Clip(Vec v, Vec lo, Vec hi) { return Vec::Min(Vec::Max(v, lo), hi); }

// Every activation, out of line: the ones past Relu and Clip would bloat each epilogue they sat
// in (Activate and WithActivation keep those two inline).
[[gnu::noinline]] static Vec ActivateGeneral(Vec v, const ConvActivation& a) {
  switch (a.kind) {
    case ConvActivation::kNone:
      return v;
    case ConvActivation::kRelu:
      return Relu(v);
    case ConvActivation::kClip:
      return Clip(v, Vec::Set1(a.alpha), Vec::Set1(a.beta));
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
  if (a.kind == ConvActivation::kRelu) return Relu(v);
  if (a.kind == ConvActivation::kClip) return Clip(v, Vec::Set1(a.alpha), Vec::Set1(a.beta));
  if (a.kind == ConvActivation::kNone) return v;
  return ActivateGeneral(v, a);
}

// Calls body(activate) once, `activate` being the activation (none for null) as a functor with
// its kind picked here and Clip's bounds in registers: a loop over outputs then neither tests
// the kind nor reloads alpha / beta per vector (a float store may alias them).
template <typename Body>
[[gnu::always_inline]] inline void WithActivation(const ConvActivation* act, Body&& body) {
  const ConvActivation::Kind kind = act != nullptr ? act->kind : ConvActivation::kNone;
  if (kind == ConvActivation::kNone) return body([](Vec v) { return v; });
  if (kind == ConvActivation::kClip) {
    const Vec lo = Vec::Set1(act->alpha), hi = Vec::Set1(act->beta);
    return body([lo, hi](Vec v) { return Clip(v, lo, hi); });
  }
  if (kind == ConvActivation::kRelu) return body([](Vec v) { return Relu(v); });
  const ConvActivation general = *act;
  body([&general](Vec v) { return ActivateGeneral(v, general); });
}

inline bool HasActivation(const ConvActivation* a) { return a != nullptr && a->kind != ConvActivation::kNone; }

}  // namespace onyx::linalg::ONYX_SIMD_NS
