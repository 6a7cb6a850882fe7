// What the com.microsoft QLinear* kernels share: reading their per-tensor scale and zero-point
// inputs, dispatching on uint8 / int8, and ONNX Runtime's scalar quantization (MlasQuantizeLinear)
// with the 256-entry requantization table built from it.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "providers/kernel.h"

namespace onyx::contrib {

inline bool IsQuant8(DataType dt) { return dt == DataType::kUInt8 || dt == DataType::kInt8; }

inline float ScalarFloat(KernelContext& ctx, size_t index, const char* name) {
  const Tensor& t = ctx.required_input(index);
  if (t.dtype() != DataType::kFloat || t.size() != 1) ctx.Fail(StrCat("input '", name, "' must be a float scalar"));
  return t.data<float>()[0];
}

// An optional zero point of type dt (0 when absent).
inline int32_t ZeroPoint(KernelContext& ctx, size_t index, DataType dt, const char* name) {
  const Tensor* t = ctx.input(index);
  if (t == nullptr) return 0;
  if (t->dtype() != dt || t->size() != 1) ctx.Fail(StrCat("input '", name, "' must be a scalar of type ", DataTypeName(dt)));
  return dt == DataType::kUInt8 ? t->data<uint8_t>()[0] : t->data<int8_t>()[0];
}

template <typename Fn>
void DispatchQuant8(KernelContext& ctx, DataType dt, Fn&& fn) {
  if (dt == DataType::kUInt8) fn(uint8_t{});
  else if (dt == DataType::kInt8) fn(int8_t{});
  else ctx.Fail(StrCat("element type ", DataTypeName(dt), " is not supported (uint8 or int8)"));
}

// v clamped to [lo, hi], a NaN to lo (as maxps, which ONNX Runtime's quantizers use).
inline float ClampNanLow(float v, float lo, float hi) {
  v = v > lo ? v : lo;
  return v < hi ? v : hi;
}

// MlasQuantizeLinear: round(x / scale) + zp, saturated; NaN gives the lowest code.
template <typename T>
inline T QuantizeValue(float x, float scale, int32_t zp) {
  const float lo = static_cast<float>(static_cast<int32_t>(std::numeric_limits<T>::lowest()) - zp);
  const float hi = static_cast<float>(static_cast<int32_t>(std::numeric_limits<T>::max()) - zp);
  return static_cast<T>(static_cast<int32_t>(std::nearbyint(ClampNanLow(x / scale, lo, hi))) + zp);
}

// table[byte] = the code of (scale x, zp x) requantized to (scale y, zp y): dequantized in float,
// then quantized as above (ONNX Runtime's lookup-table builder with the identity function). An
// int8 code's index is its stored byte.
template <typename T>
void RequantizeTable(float sx, int32_t zx, float sy, int32_t zy, T table[256]) {
  for (int v = 0; v < 256; ++v)
    table[v] = QuantizeValue<T>(sx * static_cast<float>(static_cast<int32_t>(static_cast<T>(v)) - zx), sy, zy);
}

}  // namespace onyx::contrib
