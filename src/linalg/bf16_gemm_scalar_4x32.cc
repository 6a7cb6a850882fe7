// The bf16 GEMM's scalar variant: the same layouts as the AVX-512 BF16 one, in plain C++. Tests
// force it; it is never chosen on its own (a CPU without AVX-512 BF16 keeps float32).
#include <algorithm>
#include <cstring>

#include "linalg/bf16_gemm.h"
#include "linalg/bf16_gemm_kernel.h"

namespace onyx::linalg {
namespace {

constexpr int kMr = 4;

float Low(uint32_t pair) {
  const uint32_t bits = pair << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

float High(uint32_t pair) {
  const uint32_t bits = pair & 0xFFFF0000u;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

void Tile(const Bf16GemmTile& t) {
  for (int r = 0; r < t.mr; ++r) {
    for (int j = 0; j < t.nr; ++j) {
      float acc = 0.0f;
      for (int64_t p = 0; p < t.pairs; ++p) {
        const uint32_t a = t.a[p * kMr + r], b = t.b[p * kBf16PanelColumns + j];
        acc += Low(a) * Low(b);
        acc += High(a) * High(b);
      }
      float v = t.alpha * acc;
      const int64_t at = (j / 16) * t.c_block + j % 16;
      float* c = t.c + r * t.ldc + at;
      if (t.beta != 0.0f) v += t.beta * *c;
      if (t.bias_row) v += t.bias_row[r];
      if (t.bias_col) v += t.bias_col[j];
      if (t.residual) v += t.residual[r * t.ldr + at];
      *c = Bf16EpilogueActivation(v, t.activation, t.act_alpha, t.act_beta);
    }
  }
}

void ConvertA(bool trans, const float* a, int64_t lda, int64_t k_block, int64_t rows, int64_t k, uint32_t* out) {
  for (int64_t r = 0; r < kMr; ++r)
    for (int64_t p = 0; p < (k + 1) / 2; ++p) {
      uint32_t v = 0;
      for (int64_t h = 0; h < 2 && 2 * p + h < k && r < rows; ++h) {
        const int64_t kk = 2 * p + h;
        const float x = trans ? a[kk * lda + r] : a[r * lda + (kk / 16) * k_block + kk % 16];
        v |= static_cast<uint32_t>(RoundToBf16Bits(x)) << (16 * h);
      }
      out[p * kMr + r] = v;
    }
}

}  // namespace

const Bf16GemmKernel kBf16GemmScalar4x32 = {"scalar", "bf16_gemm_scalar_4x32", kMr, &Tile, &ConvertA};

}  // namespace onyx::linalg
