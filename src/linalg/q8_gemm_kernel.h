// One ISA's int8 GEMM microkernel as the driver (q8_gemm.cc) sees it. The variants live in
// q8_gemm_<isa>_<MR>x<NR>.cc; q8_gemm_config.cc picks one.
//
// Packed layouts, g = group codes a step (4 for byte kernels, 2 for 16-bit ones), K_padded = K
// rounded up to k_align (g unless the kernel says otherwise):
//   A panel: [K_padded / g][MR][g] codes, uint8 (a_bytes 1) or int16 (2); rows past M are 0.
//            With a_rows (AMX: a tile row is 64 consecutive codes of one row of A), [MR][K_padded]
//            instead, row-major.
//   B panel: [K_padded / g][NR][g] codes, int8 (b_bytes 1) or int16 (2); columns past N and
//            k past K are 0.
// A's codes are uint8 (int8 A is stored + 128), B's int8 (uint8 B is stored - 128); the driver
// corrects for both shifts through the zero points.
#pragma once

#include <cstdint>

namespace onyx::linalg {

// acc[MR][NR] (row-major, NR int32 a row) = A panel x B panel over k_groups steps of g codes.
using Q8TileFn = void (*)(int64_t k_groups, const void* a_panel, const void* b_panel, int32_t* acc);

// The same tile with A read in place: MR rows of uint8 codes a row `lda` bytes apart, k_groups
// whole groups each (no padding; the driver only calls it when K is a multiple of k_align). Byte kernels whose A layout is A's own 4-byte groups offer it:
// packing A then costs nothing, which matters when the threads split N and each would pack
// all of A (BERT's 128-row products at 2 threads).
using Q8TileDirectFn = void (*)(int64_t k_groups, const uint8_t* a, int64_t lda, const void* b_panel, int32_t* acc);

struct Q8Output;

// A full tile (MR rows, NR columns, C untransposed) with A read in place (as Q8TileDirectFn),
// finished into `out` straight from the products (Q8FinishFn's arguments less acc and the
// shape): no trip through an acc array and no second call a tile.
using Q8TileDirectFinishFn = void (*)(int64_t k_groups, const uint8_t* a, int64_t lda, const void* b_panel,
                                      const Q8Output& out, int64_t k, int64_t i0, int64_t j0,
                                      const int32_t* row_sums, const int32_t* row_zero, const int32_t* col_sums,
                                      const int32_t* col_zero);

// The zero-point terms and the output stage for rows [i0, i0 + rows) x columns [j0, j0 + cols)
// of C from the tile's acc (nr_stride int32 a row); row_sums / row_zero: the tile's rows (stored
// A codes' sums and zero points), col_sums: the tile's columns, col_zero: all N
// (q8_gemm_output_impl.h).
using Q8FinishFn = void (*)(const Q8Output& out, int64_t k, const int32_t* acc, int nr_stride, int64_t i0, int rows,
                            int64_t j0, int cols, const int32_t* row_sums, const int32_t* row_zero,
                            const int32_t* col_sums, const int32_t* col_zero);

struct Q8GemmKernel {
  const char* isa;   // "amx", "avx512vnni", "avx2", "scalar"
  const char* name;  // "q8_gemm_avx512vnni_8x32"
  int mr;
  int nr;
  int group;
  int a_bytes;
  int b_bytes;
  Q8TileFn tile;
  Q8FinishFn finish;
  Q8TileDirectFn tile_direct = nullptr;  // null: A is always packed
  int k_align = 0;                        // K is padded to a multiple of this (0: group)
  bool a_rows = false;                    // the A panel is row-major [MR][K_padded]
  // The ISA of the companion vector kernels (Q8GemmW, Q8Gemv) that run beside this one; null: isa.
  const char* vector_isa = nullptr;
  // Called by each thread around its share of a product (AMX: load the tile configuration, then
  // release the tiles); null: nothing to do.
  void (*begin_task)() = nullptr;
  void (*end_task)() = nullptr;
  Q8TileDirectFinishFn tile_direct_finish = nullptr;  // null: tile_direct, then finish
};

extern const Q8GemmKernel kQ8GemmScalar4x16;
#if defined(__x86_64__)
extern const Q8GemmKernel kQ8GemmAvx2_6x16;
extern const Q8GemmKernel kQ8GemmAvx512Vnni8x32;
extern const Q8GemmKernel kQ8GemmAmx32x32;
#endif

const Q8GemmKernel& SelectedQ8GemmKernel();

// The selected kernel's vector_isa (its isa when it names none): which Q8GemmW / Q8Gemv variant
// runs beside it ("avx512vnni" under AMX, whose tiles have no vector form).
const char* SelectedQ8VectorIsa();

}  // namespace onyx::linalg
