// The int8 GEMM's output stage (q8_gemm.h's Q8Output) for one finished tile, instantiated in each
// ISA's microkernel file so that its row loops are vectorized with that ISA's registers (at small
// K, e.g. pointwise convolutions, this stage costs more than the products). Internal linkage on
// purpose (see f32_gemm_tile_impl.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "linalg/q8_gemm.h"

namespace onyx::linalg {
namespace {

constexpr float kRoundMagic = 12582912.0f;  // 1.5 * 2^23

inline int32_t Wrap(uint32_t v) { return static_cast<int32_t>(v); }

// Row r of the finished tile with its zero-point terms, into v[0:cols]:
//   v = acc - zb' (sum a' - K za') - za' sum b'   (uint32: the int32 wrap ONNX allows)
// Plain loops over contiguous columns, which the compiler vectorizes.
inline void CorrectRow(const int32_t* acc, int cols, int64_t k, int32_t row_sum, int32_t row_zero,
                       const int32_t* col_sums, const int32_t* col_zero, int32_t* v) {
  const auto za = static_cast<uint32_t>(row_zero);
  const uint32_t t = static_cast<uint32_t>(row_sum) - static_cast<uint32_t>(k) * za;
  for (int c = 0; c < cols; ++c)
    v[c] = Wrap(static_cast<uint32_t>(acc[c]) - static_cast<uint32_t>(col_zero[c]) * t -
                za * static_cast<uint32_t>(col_sums[c]));
}

template <typename T>
inline void Store(const Q8Output& out, int64_t i, int64_t j0, int cols, const T* v) {
  T* c = static_cast<T*>(out.c);
  if (!out.transposed) {
    std::memcpy(c + i * out.ldc + j0, v, static_cast<size_t>(cols) * sizeof(T));
    return;
  }
  for (int j = 0; j < cols; ++j) c[(j0 + j) * out.ldc + i] = v[j];
}

// The finished tile: zero-point terms, then the output stage.
void FinishTile(const Q8Output& out, int64_t k, const int32_t* acc, int nr_stride, int64_t i0, int rows, int64_t j0,
                int cols, const int32_t* row_sums, const int32_t* row_zero, const int32_t* col_sums,
                const int32_t* col_zero) {
  int32_t v[256];
  float f[256];
  uint8_t q[256];
  const float* scale = out.scale != nullptr && out.scale_per_column ? out.scale + j0 : nullptr;
  const float scale1 = out.scale != nullptr ? out.scale[0] : 1.0f;
  const float lo = (out.out_signed ? -128.0f : 0.0f) - static_cast<float>(out.zero_point);
  const float hi = (out.out_signed ? 127.0f : 255.0f) - static_cast<float>(out.zero_point);
  for (int r = 0; r < rows; ++r) {
    const int64_t i = i0 + r;
    CorrectRow(acc + r * nr_stride, cols, k, row_sums[r], row_zero[r], col_sums, col_zero + j0, v);
    switch (out.kind) {
      case Q8Output::kInt32: Store(out, i, j0, cols, v); break;
      case Q8Output::kFloat:
        for (int c = 0; c < cols; ++c)
          f[c] = static_cast<float>(v[c]) * (scale != nullptr ? scale[c] : scale1) +
                 (out.bias != nullptr ? out.bias[j0 + c] : 0.0f);
        Store(out, i, j0, cols, f);
        break;
      case Q8Output::kQuantized:
        if (out.bias_int != nullptr)
          for (int c = 0; c < cols; ++c)
            v[c] = Wrap(static_cast<uint32_t>(v[c]) + static_cast<uint32_t>(out.bias_int[j0 + c]));
        // Clamped in float first (as ONNX Runtime does), then rounded half to even: adding and
        // subtracting 1.5 * 2^23 rounds a float of magnitude below 2^22 to an integer in the
        // default rounding mode, in a loop the compiler vectorizes (nearbyint is a call).
        for (int c = 0; c < cols; ++c) {
          const float x = std::min(std::max(static_cast<float>(v[c]) * (scale != nullptr ? scale[c] : scale1), lo), hi);
          q[c] = static_cast<uint8_t>(static_cast<int32_t>((x + kRoundMagic) - kRoundMagic) + out.zero_point);
        }
        Store(out, i, j0, cols, q);
        break;
    }
  }
}

}  // namespace
}  // namespace onyx::linalg
