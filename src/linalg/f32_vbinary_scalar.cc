// The scalar reference for binary arithmetic over arrays and scalars.
#include <cmath>

#include "linalg/f32_vector_kernels.h"
#include "linalg/vector_math.h"

namespace onyx::linalg {
namespace {

template <BinaryOp kOp>
inline float Apply(float a, float b) {
  if constexpr (kOp == BinaryOp::kAdd) return a + b;
  if constexpr (kOp == BinaryOp::kSub) return a - b;
  if constexpr (kOp == BinaryOp::kMul) return a * b;
  if constexpr (kOp == BinaryOp::kDiv) return a / b;
  // NaN wins; of two equal values (+0 and -0) b, as the SIMD max / min instructions do.
  if constexpr (kOp == BinaryOp::kMax) return std::isnan(a) || std::isnan(b) ? a + b : (a > b ? a : b);
  if constexpr (kOp == BinaryOp::kMin) return std::isnan(a) || std::isnan(b) ? a + b : (a < b ? a : b);
}

template <BinaryOp kOp>
void VV(const float* a, const float* b, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = Apply<kOp>(a[i], b[i]);
}
template <BinaryOp kOp>
void VS(const float* a, float b, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = Apply<kOp>(a[i], b);
}
template <BinaryOp kOp>
void SV(float a, const float* b, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = Apply<kOp>(a, b[i]);
}

// Calls fn(std::integral_constant-like tag) with the op as a template argument.
template <typename Fn>
void WithOp(int op, Fn&& fn) {
  switch (static_cast<BinaryOp>(op)) {
    case BinaryOp::kAdd:
      return fn.template operator()<BinaryOp::kAdd>();
    case BinaryOp::kSub:
      return fn.template operator()<BinaryOp::kSub>();
    case BinaryOp::kMul:
      return fn.template operator()<BinaryOp::kMul>();
    case BinaryOp::kDiv:
      return fn.template operator()<BinaryOp::kDiv>();
    case BinaryOp::kMax:
      return fn.template operator()<BinaryOp::kMax>();
    case BinaryOp::kMin:
      return fn.template operator()<BinaryOp::kMin>();
  }
}

void DispatchVV(int op, const float* a, const float* b, float* y, size_t n) {
  WithOp(op, [&]<BinaryOp kOp>() { VV<kOp>(a, b, y, n); });
}
void DispatchVS(int op, const float* a, float b, float* y, size_t n) {
  WithOp(op, [&]<BinaryOp kOp>() { VS<kOp>(a, b, y, n); });
}
void DispatchSV(int op, float a, const float* b, float* y, size_t n) {
  WithOp(op, [&]<BinaryOp kOp>() { SV<kOp>(a, b, y, n); });
}

}  // namespace

constexpr F32VBinaryKernels kF32VBinaryScalar = {"scalar", &DispatchVV, &DispatchVS, &DispatchSV};

}  // namespace onyx::linalg
