// bfloat16 matrix multiply with float32 accumulation, for bfloat16 models only:
//   C[M,N] = epilogue(alpha * bf16(op(A))[M,K] * B[K,N] + beta * C)
// A holds float32 activations, rounded to bfloat16 (to nearest even) as they are packed; B is a
// constant bfloat16 weight packed once (PackedBf16B) in the pair layout of AVX-512 BF16's
// vdpbf16ps: each 32-bit lane holds rows 2p and 2p+1 of one column. Products of two bfloat16s
// are exact in float32; the sums are float32.
//
// The family is offered only where a variant is native (AMX-BF16, or AVX-512 BF16 where it pays):
// elsewhere Bf16GemmAvailable() is false and callers keep their float32 path. The scalar variant
// is the reference the tests force; it is never chosen on its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "linalg/gemm.h"

namespace onyx {
class ThreadPool;
}

namespace onyx::linalg {

struct Bf16GemmKernel;

// The int node attribute (value 1) with which HalfBodyToFloat asks a MatMul, Gemm, FusedMatMul,
// Attention or (pointwise, NCHWc) Conv of a bfloat16 body to multiply by its constant weight in
// this family; kernels ignore it where Bf16GemmAvailable() is false.
inline constexpr const char* kBf16Attribute = "onyx_bf16";

// Columns per packed B panel (two 16-lane vectors), the same for every variant, so a pack made
// under one variant runs under another.
constexpr int64_t kBf16PanelColumns = 32;

// Pair rows of a B panel come in multiples of this: an AMX B tile is 16 pair rows, and a tile
// past K must read zeros of its own panel (0 x Inf of the next panel's would be NaN).
constexpr int64_t kBf16PanelPairAlign = 16;

// op(B)[K, N] in bfloat16 pairs: ceil(N / 32) panels of panel_pairs() rows of 32 uint32s, each
// uint32 = (B[2p][j] low, B[2p+1][j] high); columns past N, the row past an odd K and the rows
// padding ceil(K / 2) to a multiple of 16 are zero (at most 15 x 128 bytes a panel: none at
// BERT's or ResNet's K, which are multiples of 32).
class PackedBf16B {
 public:
  PackedBf16B() = default;
  // b is [K, N] row-major, or [N, K] when trans_b. Float values are rounded to bfloat16
  // (nearest even); those of a bfloat16 model's weights are exact.
  PackedBf16B(bool trans_b, int64_t k, int64_t n, const float* b, int64_t ldb);
  // b holds bfloat16 bits.
  PackedBf16B(bool trans_b, int64_t k, int64_t n, const uint16_t* b, int64_t ldb);

  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  int64_t pairs() const { return (k_ + 1) / 2; }
  int64_t panel_pairs() const {
    return (pairs() + kBf16PanelPairAlign - 1) / kBf16PanelPairAlign * kBf16PanelPairAlign;
  }
  size_t bytes() const { return data_.size() * sizeof(uint32_t); }
  // Panel q (32 columns from 32 q): panel_pairs() rows of 32 uint32s.
  const uint32_t* panel(int64_t q) const { return data_.data() + q * panel_pairs() * kBf16PanelColumns; }

 private:
  void Init(bool trans_b, int64_t k, int64_t n, int64_t ldb, uint16_t (*read)(const void*, int64_t),
            const void* b);
  int64_t k_ = 0, n_ = 0;
  std::vector<uint32_t> data_;
};

// C = epilogue(alpha * bf16(op(A)) * B + beta * C); op(A) is A [M, K] (lda) or its transpose
// when trans_a (A stored [K, M]). beta == 0: C is write-only. Throws std::invalid_argument when
// b's K or N differ, or when the family is not available.
void Bf16GemmPackedB(bool trans_a, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                     const PackedBf16B& b, float beta, float* c, int64_t ldc, ThreadPool* pool,
                     const GemmEpilogue* epilogue = nullptr);

// The same over channel-blocked operands (a pointwise convolution in NCHWc with 16-channel
// blocks: rows are pixels, K input channels, N output channels): element (r, k) of A at
// a[r * lda + (k / 16) * a_block + k % 16], element (r, j) of C and of the epilogue's residual
// at c[r * ldc + (j / 16) * c_block + j % 16] (the residual with its own ldr, same c_block).
// a_block == c_block == 16 is the row-major case.
void Bf16GemmPackedBBlocked(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                            int64_t a_block, const PackedBf16B& b, float beta, float* c, int64_t ldc, int64_t c_block,
                            ThreadPool* pool, const GemmEpilogue* epilogue = nullptr);

// Whether the family runs here: the CPU has AMX-BF16 (and Linux granted the tile state), or AVX-512
// BF16 and Bf16GemmWorthIt says it pays (and ONYX_LINALG_ISA does not name a smaller ISA), or a
// test forced a variant with ForceBf16Isa.
bool Bf16GemmAvailable();

// vdpbf16ps beats the SGEMM only where it (32 multiply-adds) runs near an FMA's (16) rate: AMD
// Zen 4 measures 1.95x FMA's multiply-adds (bf16 GEMM 1.84x the SGEMM at BERT's shapes); a
// Sapphire Rapids-class Xeon 0.5x (bf16 GEMM 0.6x, bfloat16 BERT 0.55x its float32 twin). That
// Xeon's AMX-BF16 (TDPBF16PS: 16x a vdpbf16ps's multiply-adds) outruns the SGEMM everywhere.
inline constexpr double kBf16MinDotOverFmaRate = 1.3;
// Whether the variant `isa` ("amx", "avx512bf16") runs by default: env (ONYX_BF16_GEMM's value,
// or null) "on" / "off" decides; null, "" or "auto": AMX always, AVX-512 BF16 where dot_over_fma
// (MeasureBf16DotOverFmaRate, this core's vdpbf16ps over FMA multiply-adds per second) >=
// kBf16MinDotOverFmaRate. Another value throws std::invalid_argument naming it.
bool Bf16GemmWorthIt(const char* env, std::string_view isa, double dot_over_fma);
// "amx", "avx512bf16" or "scalar" (tests and benchmarks); "" or "auto" restores the default.
// False (nothing changes) for an unknown ISA or one this CPU lacks.
bool ForceBf16Isa(std::string_view isa);
std::vector<std::string> SupportedBf16Isas();  // best first, "scalar" last
const char* Bf16GemmKernelName();  // static text, e.g. "bf16_gemm_amx_32x32"; "" when not available

// float -> bfloat16 bits, to nearest even (NaN stays NaN).
uint16_t RoundToBf16Bits(float f);

// The plain oracle: each element rounds A to bfloat16 and sums over K in order, pair by pair
// (a[2p] b[2p] then a[2p+1] b[2p+1], in float32), then applies alpha, beta and the epilogue.
// b is bfloat16 bits [K, N] row-major.
void Bf16GemmReference(bool trans_a, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                       const uint16_t* b, int64_t ldb, float beta, float* c, int64_t ldc,
                       const GemmEpilogue* epilogue = nullptr);

}  // namespace onyx::linalg
