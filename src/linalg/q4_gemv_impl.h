// Q4Gemv over a SIMD wrapper S, instantiated by each ISA file with its compiler flags. S gives
// V (kLanes floats), Zero, Set1, Load, Fma, Add, ReduceAdd and Expand32: the 32 codes of 16
// bytes as 32 / kLanes float vectors, low nibbles first (the order of Q4PermuteA's A). Internal linkage on purpose (see
// f32_gemm_tile_impl.h).
#pragma once

#include <cstdint>

namespace onyx::linalg {
namespace {

// Code j of a blob (low nibble first).
inline float Q4Code(const uint8_t* blob, int64_t j) {
  return static_cast<float>(j % 2 == 0 ? blob[j / 2] & 15 : blob[j / 2] >> 4);
}

// A slice of K whose rows of A stay in L1 (this many floats over all rows) while every column
// passes over it; without slices 8 rows of K = 4096 (128 KB) came from L2 for every column.
constexpr int64_t kQ4SliceFloats = 6144;

template <class S, int R>
void Q4GemvRows(const float* a, int64_t lda, int64_t k, const uint8_t* b, int64_t block, const float* scales,
                const float* zeros, const float* bias, float* y, int64_t ldy, int64_t n0, int64_t n1) {
  using V = typename S::V;
  constexpr int L = S::kLanes;
  constexpr int kVecs = 32 / L;  // vectors per 32 codes
  const int64_t k_blocks = (k + block - 1) / block, blob = block / 2;
  const int64_t slice_blocks = kQ4SliceFloats / R / block > 0 ? kQ4SliceFloats / R / block : 1;
  for (int64_t g0 = 0; g0 < k_blocks; g0 += slice_blocks) {
    const int64_t g1 = g0 + slice_blocks < k_blocks ? g0 + slice_blocks : k_blocks;
    for (int64_t n = n0; n < n1; ++n) {
      const uint8_t* row = b + n * k_blocks * blob;
      // Accumulators indexed by compile-time constants only, so they stay in registers.
      V acc[R][kVecs];
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (int v = 0; v < kVecs; ++v) acc[r][v] = S::Zero();
      float tail[R] = {};
      // Whole blocks: a straight run of 32-code chunks with no tail (per-block work is most of
      // the cost at 32 codes a block).
      const int64_t g_whole = g1 < k / block ? g1 : k / block;
      const uint8_t* blob_g = row + g0 * blob;
      const float* sc = scales + n * k_blocks + g0;
      const float* zp = zeros + n * k_blocks + g0;
      const float* ag = a + g0 * block;
      for (int64_t g = g0; g < g_whole; ++g, blob_g += blob, ++sc, ++zp, ag += block) {
        // (q - z) * s = q * s - z * s: one FMA dequantizes a vector of codes.
        const V vs = S::Set1(*sc), vzs = S::Set1(-*zp * *sc);
        for (int64_t j = 0; j < block; j += 32) {
          V w[kVecs];
          S::Expand32(blob_g + j / 2, w);
#pragma GCC unroll 4
          for (int v = 0; v < kVecs; ++v) w[v] = S::Fma(w[v], vs, vzs);
#pragma GCC unroll 8
          for (int r = 0; r < R; ++r) {
            const float* ar = ag + r * lda + j;
#pragma GCC unroll 4
            for (int v = 0; v < kVecs; ++v) acc[r][v] = S::Fma(S::Load(ar + v * L), w[v], acc[r][v]);
          }
        }
      }
      if (g_whole < g1) {  // the partial last block: whole chunks, then single codes
        const int64_t g = g_whole, k0 = g * block, count = k - k0;
        const float s = *sc, z = *zp;
        const V vs = S::Set1(s), vzs = S::Set1(-z * s);
        int64_t j = 0;
        for (; j + 32 <= count; j += 32) {
          V w[kVecs];
          S::Expand32(blob_g + j / 2, w);
#pragma GCC unroll 4
          for (int v = 0; v < kVecs; ++v) w[v] = S::Fma(w[v], vs, vzs);
#pragma GCC unroll 8
          for (int r = 0; r < R; ++r) {
            const float* ar = a + r * lda + k0 + j;
#pragma GCC unroll 4
            for (int v = 0; v < kVecs; ++v) acc[r][v] = S::Fma(S::Load(ar + v * L), w[v], acc[r][v]);
          }
        }
        for (; j < count; ++j) {  // Q4PermuteA left these in place
          const float w = (Q4Code(blob_g, j) - z) * s;
          for (int r = 0; r < R; ++r) tail[r] += a[r * lda + k0 + j] * w;
        }
      }
      for (int r = 0; r < R; ++r) {
        V sum = acc[r][0];
        for (int v = 1; v < kVecs; ++v) sum = S::Add(sum, acc[r][v]);
        const float part = S::ReduceAdd(sum) + tail[r];
        float& out = y[r * ldy + n];
        out = g0 == 0 ? part + (bias != nullptr ? bias[n] : 0.0f) : out + part;
      }
    }
  }
}

template <class S>
void Q4GemvImpl(const float* a, int64_t lda, int rows, int64_t k, const uint8_t* b, int64_t block,
                const float* scales, const float* zeros, const float* bias, float* y, int64_t ldy, int64_t n0,
                int64_t n1) {
  switch (rows) {
    case 1: return Q4GemvRows<S, 1>(a, lda, k, b, block, scales, zeros, bias, y, ldy, n0, n1);
    case 2: return Q4GemvRows<S, 2>(a, lda, k, b, block, scales, zeros, bias, y, ldy, n0, n1);
    case 3: return Q4GemvRows<S, 3>(a, lda, k, b, block, scales, zeros, bias, y, ldy, n0, n1);
    case 4: return Q4GemvRows<S, 4>(a, lda, k, b, block, scales, zeros, bias, y, ldy, n0, n1);
    case 5: return Q4GemvRows<S, 5>(a, lda, k, b, block, scales, zeros, bias, y, ldy, n0, n1);
    case 6: return Q4GemvRows<S, 6>(a, lda, k, b, block, scales, zeros, bias, y, ldy, n0, n1);
    case 7: return Q4GemvRows<S, 7>(a, lda, k, b, block, scales, zeros, bias, y, ldy, n0, n1);
    default: return Q4GemvRows<S, 8>(a, lda, k, b, block, scales, zeros, bias, y, ldy, n0, n1);
  }
}

}  // namespace
}  // namespace onyx::linalg
