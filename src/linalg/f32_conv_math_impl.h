// Vector activations for the convolution epilogues, written once against the `Vec` of the ISA
// file that includes this (after its simd_<isa>.h). Everything lives in ONYX_SIMD_NS.
#pragma once

#include <cstdint>

#include "linalg/conv.h"

namespace onyx::linalg::ONYX_SIMD_NS {

// exp(-x) for the sigmoid: -x = n ln2 - t with n = round(-x / ln2) and |t| <= ln2 / 2, exp(-t) by
// a degree-5 minimax polynomial (under 2e-7 relative), times 2^n. Inputs are clamped so 2^n
// stays a normal float. The sign of x is folded into the reduction and the odd coefficients,
// and 2^n is one scaling instruction: the epilogues are bound by this op count.
inline Vec ExpNeg(Vec x) {
  x = Vec::Min(Vec::Max(x, Vec::Set1(-88.0f)), Vec::Set1(87.33654f));
  const Vec n = Vec::Round(Vec::Mul(x, Vec::Set1(-1.44269504088896341f)));
  Vec t = Vec::Fma(n, Vec::Set1(0.693359375f), x);  // ln2 = 0.693359375 - 2.12194440e-4
  t = Vec::Fma(n, Vec::Set1(-2.12194440e-4f), t);
  Vec p = Vec::Set1(-8.3137191832e-03f);
  p = Vec::Fma(p, t, Vec::Set1(4.1904319078e-02f));
  p = Vec::Fma(p, t, Vec::Set1(-1.6667281091e-01f));
  p = Vec::Fma(p, t, Vec::Set1(4.9999094009e-01f));
  p = Vec::Fma(p, t, Vec::Set1(-9.9999982119e-01f));
  p = Vec::Fma(p, t, Vec::Set1(1.0f));
  return Vec::Scale2(p, n);
}

// 1 / (1 + exp(-x)), with a reciprocal estimate and one Newton step (about 1 ulp) instead of a
// divide.
inline Vec Sigmoid(Vec x) { return Vec::Reciprocal(Vec::Add(Vec::Set1(1.0f), ExpNeg(x))); }

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

// The activations the epilogues keep inline (the others go through ActivateGeneral or
// ActivateVectors).
inline bool IsInlineActivation(ConvActivation::Kind kind) {
  return kind == ConvActivation::kNone || kind == ConvActivation::kRelu || kind == ConvActivation::kClip;
}

// y[i * stride .. + kWidth) = act(y[...]) for i < count, in place: a direct tile's stored
// outputs, activated in one call with the kind picked once and Sigmoid / SiLU inlined in their
// loop, instead of a call per vector that spills the tile's accumulators around it (measured:
// AVX2 SiLU tiles ~10% faster, AVX-512 even; the depthwise kernels measured slower this way and
// keep the call per vector).
[[gnu::noinline, maybe_unused]] static void ActivateVectors(float* y, int64_t count, int64_t stride,
                                                            const ConvActivation& a) {
  // Four vectors per step: their long dependency chains (exp, reciprocal) interleave.
  const auto map = [&](auto f) {
    int64_t i = 0;
    for (; i + 4 <= count; i += 4) {
      float* p = y + i * stride;
      const Vec v0 = f(Vec::Load(p)), v1 = f(Vec::Load(p + stride)), v2 = f(Vec::Load(p + 2 * stride)),
                v3 = f(Vec::Load(p + 3 * stride));
      Vec::Store(p, v0);
      Vec::Store(p + stride, v1);
      Vec::Store(p + 2 * stride, v2);
      Vec::Store(p + 3 * stride, v3);
    }
    for (; i < count; ++i) Vec::Store(y + i * stride, f(Vec::Load(y + i * stride)));
  };
  if (a.kind == ConvActivation::kSilu) return map([](Vec v) { return Vec::Mul(v, Sigmoid(v)); });
  if (a.kind == ConvActivation::kSigmoid) return map([](Vec v) { return Sigmoid(v); });
  const ConvActivation general = a;
  map([&general](Vec v) { return ActivateGeneral(v, general); });
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
