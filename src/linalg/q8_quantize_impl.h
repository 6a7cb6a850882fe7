// Bodies of q8_quantize.h's loops, instantiated by each ISA file with its compiler flags.
// Internal linkage on purpose (see f32_gemm_tile_impl.h).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "linalg/q8_quantize.h"

namespace onyx::linalg {
namespace {

template <int kUnused = 0>
void Q8MinMaxImpl(const float* __restrict x, int64_t n, float* lo, float* hi) {
  // Eight lanes of partial results, so the loop vectorizes without reassociation flags; a NaN
  // compares false and leaves them unchanged.
  float l[8] = {}, h[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) {
      const float v = x[i + j];
      l[j] = v < l[j] ? v : l[j];
      h[j] = v > h[j] ? v : h[j];
    }
  for (; i < n; ++i) {
    l[0] = x[i] < l[0] ? x[i] : l[0];
    h[0] = x[i] > h[0] ? x[i] : h[0];
  }
  float a = 0.0f, b = 0.0f;
  for (int j = 0; j < 8; ++j) {
    a = l[j] < a ? l[j] : a;
    b = h[j] > b ? h[j] : b;
  }
  *lo = a;
  *hi = b;
}

template <typename T>
void Q8QuantizeImpl(const float* __restrict x, int64_t n, float scale, T zero_point, T* __restrict out) {
  const float zp = zero_point;
  const float lo = static_cast<float>(std::numeric_limits<T>::lowest()) - zp;
  const float hi = static_cast<float>(std::numeric_limits<T>::max()) - zp;
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23: rounds half to even below 2^22
  for (int64_t i = 0; i < n; ++i) {
    float v = x[i] / scale;
    v = v > lo ? v : lo;  // NaN compares false: the type's lowest code, as ONNX Runtime's maxps
    v = v < hi ? v : hi;
    out[i] = static_cast<T>(static_cast<int32_t>((v + kMagic) - kMagic + zp));
  }
}

template <typename T>
void Q8DequantizeImpl(const T* __restrict x, int64_t n, float scale, float zero_point, float* __restrict out) {
  for (int64_t i = 0; i < n; ++i) out[i] = (static_cast<float>(x[i]) - zero_point) * scale;
}

template <typename T>
void Q8AddImpl(const T* __restrict x, float rx, const T* __restrict y, int64_t y_step, float ry, float fixed, int64_t n,
               T* __restrict out) {
  constexpr float lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23: rounds half to even below 2^22
  auto store = [&](int64_t i, float v) {
    v = v > lo ? v : lo;
    v = v < hi ? v : hi;
    out[i] = static_cast<T>(static_cast<int32_t>((v + kMagic) - kMagic));
  };
  if (y_step == 0) {
    const float t = std::fma(static_cast<float>(y[0]), ry, fixed);
    for (int64_t i = 0; i < n; ++i) store(i, std::fma(static_cast<float>(x[i]), rx, t));
  } else {
    for (int64_t i = 0; i < n; ++i)
      store(i, std::fma(static_cast<float>(x[i]), rx, std::fma(static_cast<float>(y[i]), ry, fixed)));
  }
}

template <typename T>
void Q8MulImpl(const T* __restrict x, int32_t zx, const T* __restrict y, int64_t y_step, int32_t zy, float ratio,
               int32_t zc, int64_t n, T* __restrict out) {
  const float zcf = static_cast<float>(zc);
  const float lo = static_cast<float>(std::numeric_limits<T>::lowest()) - zcf;
  const float hi = static_cast<float>(std::numeric_limits<T>::max()) - zcf;
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23: rounds half to even below 2^22
  for (int64_t i = 0; i < n; ++i) {
    const int32_t prod = (static_cast<int32_t>(x[i]) - zx) * (static_cast<int32_t>(y[i * y_step]) - zy);
    float v = static_cast<float>(prod) * ratio;
    v = v > lo ? v : lo;  // NaN compares false: the low end
    v = v < hi ? v : hi;
    out[i] = static_cast<T>(static_cast<int32_t>(((v + zcf) + kMagic) - kMagic));
  }
}

}  // namespace
}  // namespace onyx::linalg
