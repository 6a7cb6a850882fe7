// One ISA's f32 GEMM microkernel and packing routines, as the blocked driver (f32_gemm.cc) sees
// them. The variants live in f32_gemm_<isa>_<MR>x<NR>.cc; f32_gemm_config.cc picks one.
#pragma once

#include <cstdint>

#include "linalg/f32_vector_kernels.h"

namespace onyx::linalg {

// The kernel of `k` for GemmEpilogue activation `activation` (gemm.h) where it is transcendental
// (Sigmoid, Tanh, SiLU, both GELUs), else null: a fused activation run through the standalone
// op's kernel gives that op's bits. Defined in f32_gemm.cc.
F32UnaryFn TranscendentalActivation(const F32VUnaryKernels& k, int activation);

// The cache line F32GemmTile::prefetch advances by, in bytes and in floats.
constexpr int64_t kPrefetchLineBytes = 64;
constexpr int64_t kPrefetchLineFloats = kPrefetchLineBytes / static_cast<int64_t>(sizeof(float));

// One MR x NR tile of C:  C[0:mr, 0:nr] = alpha * A_panel * B_panel + beta * C, then, when
// `finish` is set (last K block), the epilogue of gemm.h's GemmEpilogue.
struct F32GemmTile {
  int64_t kc = 0;
  const float* a = nullptr;  // packed A panel: kc steps of MR floats (rows past mr are zero)
  int64_t a_row_stride = 0;  // non-zero: `a` is row-major A in place (rows a_row_stride apart)
  const float* b = nullptr;  // B panel: kc rows of NR floats, b_stride floats apart
  int64_t b_stride = 0;
  // Non-null: one cache line of it is fetched into L2 every 2^prefetch_shift K steps (the next
  // B panel, spread over the tiles that reuse this one).
  const float* prefetch = nullptr;
  int prefetch_shift = 0;
  float* c = nullptr;
  int64_t ldc = 0;
  int mr = 0;  // valid rows 1..MR and columns 1..NR of the tile
  int nr = 0;
  float alpha = 1.0f;
  float beta = 0.0f;  // 0: C is not read
  bool finish = false;
  // Epilogue, already offset to the tile's origin (null: none).
  const float* bias_row = nullptr;
  const float* bias_col = nullptr;
  const float* residual = nullptr;
  int64_t ldr = 0;
  int activation = 0;  // GemmEpilogue::Activation
  float act_alpha = 0.0f;
  float act_beta = 0.0f;
};

using F32GemmTileFn = void (*)(const F32GemmTile& tile);

// Packs op(A)[0:rows, 0:kc] (a points at its origin; trans: A is stored [K, M]) into
// ceil(rows / MR) panels of kc * MR floats, zero-padding rows past `rows`.
using F32PackAFn = void (*)(bool trans, const float* a, int64_t lda, int64_t rows, int64_t kc, float* out);
// Packs op(B)[0:kc, 0:cols] (trans: B is stored [N, K]) into ceil(cols / NR) panels of
// kc * NR floats, zero-padding columns past `cols`.
using F32PackBFn = void (*)(bool trans, const float* b, int64_t ldb, int64_t cols, int64_t kc, float* out);

struct F32GemmKernel {
  const char* isa;   // "avx512", "avx2", "scalar"
  const char* name;  // "f32_gemm_avx512_14x32"
  int mr;
  int nr;
  int kc;  // deepest K block: C is read and written once per block, A and B panels stream from L2
  F32GemmTileFn tile;
  F32PackAFn pack_a;
  F32PackBFn pack_b;
  // With a constant B cold in cache, sweep every A panel past each B panel while the tiles
  // prefetch the next one (see RunBlock). Measured per kernel with B cold: AVX-512's 14 x 32
  // tile gains 7-18% on BERT's and GPT-2's shapes; AVX2's 6 x 16 lost 3% on 256 x 768 x 3072.
  bool cold_b_panel_outer;
};

extern const F32GemmKernel kF32GemmScalar4x8;
#if defined(__x86_64__)
extern const F32GemmKernel kF32GemmAvx2_6x16;
extern const F32GemmKernel kF32GemmAvx512_14x32;
#endif

// The kernel Sgemm uses now (ForceIsa / ONYX_LINALG_ISA, else the best supported).
const F32GemmKernel& SelectedF32GemmKernel();

}  // namespace onyx::linalg
