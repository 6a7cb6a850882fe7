// The unary vector-math table for one ISA, over its SIMD wrapper S. Include only from an ISA
// file, after its wrapper (internal linkage, see f32_simd_avx512.h).
#pragma once

#include "linalg/f32_vector_kernels.h"
#include "linalg/f32_vmath_impl.h"

namespace onyx::linalg {
namespace {

template <class S>
constexpr F32VUnaryKernels MakeVUnaryKernels() {
  return {S::kIsa,
          &MapUnary<S, &Exp<S>>,
          &MapUnary<S, &Log<S>>,
          &MapUnary<S, &Tanh<S>>,
          &MapUnary<S, &Erf<S>>,
          &MapUnary<S, &Sigmoid<S>>,
          &MapUnary<S, &Silu<S>>,
          &MapUnary<S, &Softplus<S>>,
          &MapUnary<S, &GeluErf<S>>,
          &MapUnary<S, &GeluTanh<S>>,
          &MapUnary<S, &SigmoidRational<S>>,
          &MapUnary<S, &ErfAsOnnxRuntime<S>>,
          &MapUnary<S, &TanhAsOnnxRuntime<S>>};
}

}  // namespace
}  // namespace onyx::linalg
