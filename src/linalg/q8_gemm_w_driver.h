// The driver of the weight-stationary int8 GEMM (q8_gemm_w_avx512_vnni_8x32.cc), shared by its
// two right operands: a matrix X [K, N] (Q8GemmW) and the implicit im2col of a 2-D convolution
// read straight from the image (Q8ConvW, q8_conv_w_avx512_vnni.cc). Only the panel packing
// differs; AVX-512 VNNI files only.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "linalg/q8_gemm.h"

namespace onyx::linalg {

// Fills panel [ceil(K / 4)][32][4] with the stored codes (uint8; int8 X + 128) of columns
// [j0, j0 + cols) of the right operand: zeros for k past K (the pixel sums count only K codes),
// anything for columns past cols. source: the packer's own description of the operand.
using Q8WPanelFn = void (*)(const void* source, int64_t j0, int cols, uint8_t* panel);

// C = W x (the operand `pack` reads), N columns; zx: the operand's zero point as a stored code.
// Only W's row panels [rp_begin, rp_end) (8 rows each; rp_end -1: to the last).
void Q8GemmWDriver(const PackedQ8W& w, int64_t n, Q8WPanelFn pack, const void* source, int32_t zx,
                   const Q8Output& out, ThreadPool* pool, int64_t rp_begin = 0, int64_t rp_end = -1);

// Rows k..k+3 of 32 columns each (r0..r3) into the panel's [32][4] block at out (64-byte aligned).
inline void Q8WInterleave4(__m256i r0, __m256i r1, __m256i r2, __m256i r3, uint8_t* out) {
  const __m256i t0 = _mm256_unpacklo_epi8(r0, r1), t1 = _mm256_unpackhi_epi8(r0, r1);
  const __m256i t2 = _mm256_unpacklo_epi8(r2, r3), t3 = _mm256_unpackhi_epi8(r2, r3);
  const __m256i u0 = _mm256_unpacklo_epi16(t0, t2), u1 = _mm256_unpackhi_epi16(t0, t2);  // px 0-3|16-19, 4-7|20-23
  const __m256i u2 = _mm256_unpacklo_epi16(t1, t3), u3 = _mm256_unpackhi_epi16(t1, t3);  // px 8-11|24-27, 12-15|28-31
  auto* o = reinterpret_cast<__m256i*>(out);
  _mm256_store_si256(o + 0, _mm256_permute2x128_si256(u0, u1, 0x20));
  _mm256_store_si256(o + 1, _mm256_permute2x128_si256(u2, u3, 0x20));
  _mm256_store_si256(o + 2, _mm256_permute2x128_si256(u0, u1, 0x31));
  _mm256_store_si256(o + 3, _mm256_permute2x128_si256(u2, u3, 0x31));
}

}  // namespace onyx::linalg
