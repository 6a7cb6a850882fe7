// One ISA's bf16 GEMM microkernel and A conversion, as the driver (bf16_gemm.cc) sees them.
// Variants live in bf16_gemm_<isa>_<MR>x<NR>.cc; bf16_gemm_config.cc picks one.
#pragma once

#include <cstdint>

namespace onyx::linalg {

// One MR x 32 tile of C over the whole K.
struct Bf16GemmTile {
  int64_t pairs = 0;  // ceil(K / 2)
  const uint32_t* a = nullptr;  // A panel in the kernel's layout (Bf16ConvertAFn)
  const uint32_t* b = nullptr;  // panel: pairs rows of 32 uint32s, zero rows up to a multiple of 16
  float* c = nullptr;  // element (r, j) at c[r * ldc + (j / 16) * c_block + j % 16]
  int64_t ldc = 0;
  int64_t c_block = 16;  // 16: row-major; the channel-block stride of an NCHWc output
  int mr = 0;  // valid rows 1..MR, columns 1..32
  int nr = 0;
  float alpha = 1.0f;
  float beta = 0.0f;  // 0: C is not read
  // Epilogue, offset to the tile's origin (null: none); see GemmEpilogue.
  const float* bias_row = nullptr;
  const float* bias_col = nullptr;
  const float* residual = nullptr;  // C's layout: rows ldr apart, 16-column blocks c_block apart
  int64_t ldr = 0;
  // kNone, kRelu, kClip, kLeakyRelu or kHardSigmoid: the driver leaves the costly ones out and
  // applies them over each task's finished block (bf16_gemm.cc, CostlyActivation).
  int activation = 0;
  float act_alpha = 0.0f;
  float act_beta = 0.0f;
};

using Bf16GemmTileFn = void (*)(const Bf16GemmTile& tile);
// Rounds rows 0..rows-1 (rows <= MR) of op(A)[., 0:k] (a at the first row; trans: A stored
// [K, M]) to bfloat16 pairs into one A panel of MR x P uint32s, P = ceil(k / 2) rounded up to
// the kernel's a_pair_align, zero for rows past `rows` and for pairs past k. The vector
// variants (a_pair_align 1) put pair p of row r at out[p * MR + r] (a broadcast stream), the
// AMX one (16) as its 16 x 16-pair tiles (bf16_gemm_amx_32x32.cc, AIndex). Untransposed,
// element (r, k) is at a[r * lda + (k / 16) * k_block + k % 16] (k_block 16: row-major; an
// NCHWc image's plane).
using Bf16ConvertAFn = void (*)(bool trans, const float* a, int64_t lda, int64_t k_block, int64_t rows, int64_t k,
                                uint32_t* out);

struct Bf16GemmKernel {
  const char* isa;   // "amx", "avx512bf16", "scalar"
  const char* name;  // "bf16_gemm_avx512_14x32"
  int mr;
  Bf16GemmTileFn tile;
  Bf16ConvertAFn convert_a;
  int a_pair_align = 1;
  // Around each thread's run of tiles (AMX: load the tile configuration, release the tiles).
  void (*begin_task)() = nullptr;
  void (*end_task)() = nullptr;
};

extern const Bf16GemmKernel kBf16GemmScalar4x32;
#if defined(__x86_64__)
extern const Bf16GemmKernel kBf16GemmAvx512_14x32;
extern const Bf16GemmKernel kBf16GemmAmx32x32;
// This core's multiply-adds per second with vdpbf16ps over those with AVX-512 FMA (a loop of each,
// about a millisecond in all; bf16_dot_rate_avx512.cc). Only where the CPU has AVX-512 BF16.
double MeasureBf16DotOverFmaRate();
#endif

// The kernel in use; null when the family is not offered.
const Bf16GemmKernel* SelectedBf16GemmKernel();

// Applies the epilogue's activation (GemmEpilogue::Activation) to one value: the scalar variant's
// epilogue and the reference's.
float Bf16EpilogueActivation(float v, int activation, float alpha, float beta);

}  // namespace onyx::linalg
