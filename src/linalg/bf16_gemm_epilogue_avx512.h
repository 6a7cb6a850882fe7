// The bf16 GEMM tiles' epilogue in AVX-512: one row of up to 32 float32 sums (two vectors) to C
// with alpha, beta, the biases, the residual and the cheap activations (bf16_gemm_kernel.h,
// Bf16GemmTile). Shared by the AVX-512 BF16 and the AMX variants, so that both round alike.
// Include only from files built with the AVX-512 flags (*_avx512_*.cc, *_amx_*.cc).
#pragma once

#if defined(__x86_64__)

#include <immintrin.h>

#include <algorithm>

#include "linalg/bf16_gemm_kernel.h"
#include "linalg/gemm.h"

namespace onyx::linalg {

// Row r of the tile t from its sums: acc0 holds columns 0-15, acc1 columns 16-31.
__attribute__((always_inline)) static inline void Bf16StoreRowAvx512(const Bf16GemmTile& t, int r, __m512 acc0,
                                                                     __m512 acc1) {
  const __m512 alpha = _mm512_set1_ps(t.alpha), beta = _mm512_set1_ps(t.beta);
  const __m512 zero = _mm512_setzero_ps();
  const __m512 lo = _mm512_set1_ps(t.act_alpha), hi = _mm512_set1_ps(t.act_beta);
  const __m512 one = _mm512_set1_ps(1.0f);
  for (int h = 0; h < 2; ++h) {
    const int cols = std::min(16, t.nr - 16 * h);
    if (cols <= 0) break;
    const __mmask16 mask = static_cast<__mmask16>((1u << cols) - 1u);
    float* c = t.c + r * t.ldc + h * t.c_block;
    __m512 v = _mm512_mul_ps(h == 0 ? acc0 : acc1, alpha);
    if (t.beta != 0.0f) v = _mm512_fmadd_ps(beta, _mm512_mask_loadu_ps(zero, mask, c), v);
    if (t.bias_row) v = _mm512_add_ps(v, _mm512_set1_ps(t.bias_row[r]));
    if (t.bias_col) v = _mm512_add_ps(v, _mm512_mask_loadu_ps(zero, mask, t.bias_col + 16 * h));
    if (t.residual) v = _mm512_add_ps(v, _mm512_mask_loadu_ps(zero, mask, t.residual + r * t.ldr + h * t.c_block));
    switch (t.activation) {
      case GemmEpilogue::kRelu: v = _mm512_max_ps(v, zero); break;
      case GemmEpilogue::kClip: v = _mm512_min_ps(_mm512_max_ps(v, lo), hi); break;
      case GemmEpilogue::kLeakyRelu:
        v = _mm512_mask_mul_ps(v, _mm512_cmp_ps_mask(v, zero, _CMP_LT_OQ), v, lo);
        break;
      case GemmEpilogue::kHardSigmoid:  // max(0, min(1, alpha v + beta)), product and sum rounded apart
        v = _mm512_max_ps(zero, _mm512_min_ps(one, _mm512_add_ps(_mm512_mul_ps(lo, v), hi)));
        break;
      default: break;
    }
    _mm512_mask_storeu_ps(c, mask, v);
  }
}

}  // namespace onyx::linalg

#endif  // __x86_64__
