// Dot products of A's rows with a few columns of B, written once against `Vec` (see
// simd_<isa>.h) and instantiated per ISA: the path of products with 1..4 columns, where a
// microkernel tile of NR columns would leave most of its lanes idle and packing A would cost
// more than the product.
#pragma once

#include <cstdint>

#include "linalg/f32_skinny_kernel.h"

namespace onyx::linalg::ONYX_SIMD_NS {

namespace skinny {

inline float Sum(Vec v) {
  alignas(64) float t[Vec::kWidth];
  Vec::Store(t, v);
  float s = 0.0f;
  for (int i = 0; i < Vec::kWidth; ++i) s += t[i];
  return s;
}

// R rows of A by N columns (rows of bt), each a k-long dot product.
template <int R, int N>
void Block(const float* a, int64_t lda, int64_t k, const float* bt, float* out, int64_t ldo) {
  constexpr int W = Vec::kWidth;
  Vec acc[R][N];
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < N; ++j) acc[r][j] = Vec::Zero();
  int64_t p = 0;
  for (; p + W <= k; p += W) {
    Vec b[N];
    for (int j = 0; j < N; ++j) b[j] = Vec::Load(bt + j * k + p);
    for (int r = 0; r < R; ++r) {
      const Vec av = Vec::Load(a + r * lda + p);
      for (int j = 0; j < N; ++j) acc[r][j] = Vec::Fma(av, b[j], acc[r][j]);
    }
  }
  if (p < k) {
    Vec b[N];
    for (int j = 0; j < N; ++j) b[j] = Vec::LoadPartial(bt + j * k + p, k - p);
    for (int r = 0; r < R; ++r) {
      const Vec av = Vec::LoadPartial(a + r * lda + p, k - p);
      for (int j = 0; j < N; ++j) acc[r][j] = Vec::Fma(av, b[j], acc[r][j]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < N; ++j) out[r * ldo + j] = Sum(acc[r][j]);
}

template <int N>
void Rows(const float* a, int64_t lda, int64_t rows, int64_t k, const float* bt, float* out, int64_t ldo) {
  int64_t i = 0;
  for (; i + 4 <= rows; i += 4) Block<4, N>(a + i * lda, lda, k, bt, out + i * ldo, ldo);
  for (; i < rows; ++i) Block<1, N>(a + i * lda, lda, k, bt, out + i * ldo, ldo);
}

}  // namespace skinny

void SkinnyDots(const float* a, int64_t lda, int64_t rows, int64_t k, const float* bt, int n, float* out,
                int64_t ldo) {
  switch (n) {
    case 1: return skinny::Rows<1>(a, lda, rows, k, bt, out, ldo);
    case 2: return skinny::Rows<2>(a, lda, rows, k, bt, out, ldo);
    case 3: return skinny::Rows<3>(a, lda, rows, k, bt, out, ldo);
    default: return skinny::Rows<4>(a, lda, rows, k, bt, out, ldo);
  }
}

}  // namespace onyx::linalg::ONYX_SIMD_NS
