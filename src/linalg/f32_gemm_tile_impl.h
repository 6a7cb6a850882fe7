// The register-blocked f32 GEMM microkernel, its epilogue and its packing routines, written once
// over a SIMD wrapper S (see f32_gemm_avx512_14x32.cc for the interface) and instantiated by
// each ISA file with that ISA's compiler flags.
//
// Include only from an ISA file, after defining its wrapper. Everything here has internal
// linkage on purpose: an inline function or template emitted with AVX-512 flags must never be
// merged with a baseline copy by the linker. For the same reason this file calls no std::
// function templates.
#pragma once

#include <cstdint>
#include <utility>

#include "linalg/f32_gemm_kernel.h"
#include "linalg/f32_vmath_impl.h"
#include "linalg/gemm.h"

namespace onyx::linalg {
namespace {

// ---- the transcendental epilogues ----
// GELU (erf form) and Tanh are vector math's GeluErf and Tanh themselves (f32_vmath_impl.h), so
// that a GEMM with one of them fused gives the bits of the standalone kernel of the same ISA.
// Sigmoid, SiLU and the GELU's tanh form keep the epilogue's own sigmoid below (clamped Exp, 2^n
// by a shift): vector math's, with its accurate negative tail, made the GEMM + bias + sigmoid
// epilogue of 256 x 3072 x 64 38% slower with AVX2 (413 -> 572 us on top of the product).

template <class S>
typename S::V EpilogueExp(typename S::V x) {
  using V = typename S::V;
  // exp(x) = 2^n * exp(r), r = x - n ln2 in [-ln2/2, ln2/2]. The clamp keeps 2^n, and 1 / exp(x)
  // in the callers, normal floats: a denormal operand costs a ~100-cycle microcode assist.
  x = S::Min(S::Set1(87.0f), S::Max(S::Set1(-87.0f), x));  // x second: NaN stays NaN
  const V n = S::Round(S::Mul(x, S::Set1(1.44269504088896341f)));
  V r = S::Fnma(n, S::Set1(0.693145751953125f), x);  // ln2 split so n * hi is exact
  r = S::Fnma(n, S::Set1(1.428606765330187e-06f), r);
  V p = S::Set1(0.001375140789319865f);
  p = S::Fma(p, r, S::Set1(0.008368916341363995f));
  p = S::Fma(p, r, S::Set1(0.041669533109272586f));
  p = S::Fma(p, r, S::Set1(0.1666651845998029f));
  p = S::Fma(p, r, S::Set1(0.49999988595112477f));
  p = S::Fma(p, S::Mul(r, r), r);
  return S::Mul(S::Add(p, S::Set1(1.0f)), S::Pow2i(n));
}

template <class S>
typename S::V EpilogueSigmoid(typename S::V x) {
  return S::Div(S::Set1(1.0f), S::Add(S::Set1(1.0f), EpilogueExp<S>(S::Sub(S::Zero(), x))));
}

// The activations that need transcendental math, applied to finished values.
template <class S, int kActivation>
typename S::V ActivateTranscendental(typename S::V x) {
  using V = typename S::V;
  if constexpr (kActivation == GemmEpilogue::kSigmoid) {
    return EpilogueSigmoid<S>(x);
  } else if constexpr (kActivation == GemmEpilogue::kTanh) {
    return Tanh<S>(x);
  } else if constexpr (kActivation == GemmEpilogue::kSilu) {
    return S::Mul(x, EpilogueSigmoid<S>(x));
  } else if constexpr (kActivation == GemmEpilogue::kGeluErf) {
    return GeluErf<S>(x);
  } else {
    static_assert(kActivation == GemmEpilogue::kGeluTanh);
    // 0.5 x (1 + tanh(y)) = x * sigmoid(2y), y = sqrt(2/pi) (x + 0.044715 x^3)
    const V x3 = S::Mul(S::Mul(x, x), x);
    const V y2 = S::Mul(S::Fma(x3, S::Set1(0.044715f), x), S::Set1(1.5957691216057308f));
    return S::Mul(x, EpilogueSigmoid<S>(y2));
  }
}

// A wrapper with ActivateRow (the scalar one) finishes whole rows with it instead.
template <class S>
concept HasActivateRow = requires(float* row) { S::ActivateRow(GemmEpilogue::kGeluErf, row, 1); };

// A finished rows x cols block of C, still in L1.
template <class S, int kActivation>
void ActivateBlock(float* c, int64_t ldc, int rows, int cols) {
  constexpr int L = S::kLanes;
  if constexpr (HasActivateRow<S>) {
    for (int i = 0; i < rows; ++i) S::ActivateRow(kActivation, c + i * ldc, cols);
  } else {
    for (int i = 0; i < rows; ++i) {
      float* crow = c + i * ldc;
      for (int j = 0; j < cols; j += L)
        S::StoreN(crow + j, ActivateTranscendental<S, kActivation>(S::LoadN(crow + j, cols - j)), cols - j);
    }
  }
}

template <class S>
void ActivateBlock(int activation, float* c, int64_t ldc, int rows, int cols) {
  switch (activation) {
    case GemmEpilogue::kSigmoid:
      return ActivateBlock<S, GemmEpilogue::kSigmoid>(c, ldc, rows, cols);
    case GemmEpilogue::kTanh:
      return ActivateBlock<S, GemmEpilogue::kTanh>(c, ldc, rows, cols);
    case GemmEpilogue::kSilu:
      return ActivateBlock<S, GemmEpilogue::kSilu>(c, ldc, rows, cols);
    case GemmEpilogue::kGeluErf:
      return ActivateBlock<S, GemmEpilogue::kGeluErf>(c, ldc, rows, cols);
    case GemmEpilogue::kGeluTanh:
      return ActivateBlock<S, GemmEpilogue::kGeluTanh>(c, ldc, rows, cols);
    default:
      return;
  }
}

inline bool IsTranscendental(int activation) {
  return activation == GemmEpilogue::kSigmoid || activation == GemmEpilogue::kTanh ||
         activation == GemmEpilogue::kSilu || activation == GemmEpilogue::kGeluErf ||
         activation == GemmEpilogue::kGeluTanh;
}

// The cheap activations, applied in registers.
template <class S>
typename S::V ActivateLinear(typename S::V x, const F32GemmTile& t) {
  switch (t.activation) {
    case GemmEpilogue::kRelu:
      return S::Max(S::Zero(), x);  // x second everywhere: NaN propagates
    case GemmEpilogue::kClip:
      return S::Min(S::Set1(t.act_beta), S::Max(S::Set1(t.act_alpha), x));
    case GemmEpilogue::kLeakyRelu:
      return S::Select(S::Less(x, S::Zero()), S::Mul(x, S::Set1(t.act_alpha)), x);
    case GemmEpilogue::kHardSigmoid:
      return S::Min(S::Set1(1.0f), S::Max(S::Zero(), S::Fma(x, S::Set1(t.act_alpha), S::Set1(t.act_beta))));
    default:
      return x;
  }
}

// ---- the microkernel ----

// B rows are prefetched this many steps ahead: far enough to cover L2 latency and to pull the
// next tile's panel into L1 before the tile starts (measured: 16 is too close, 64-128 is flat).
constexpr int kPrefetchB = 64;

// Row i of A read in place, from row 0 at `a` and the row stride in bytes `ld`. Every row is
// one of three bases (rows 0, 5, 10) plus ld or 3 * ld scaled by 1, 2, 4 or 8: x86 addressing
// modes, so 14 rows need 5 registers instead of one each (which spilled).
struct DirectARows {
  const char* base[3];  // rows 0, 5 and 10, kept apart (see Advance)
  int64_t ld, ld3;

  DirectARows(const float* a, int64_t row_stride) {
    ld = row_stride * static_cast<int64_t>(sizeof(float));
    ld3 = 3 * ld;
    for (int g = 0; g < 3; ++g) base[g] = reinterpret_cast<const char*>(a) + 5 * g * ld;
  }
  // Moves every row by `floats` columns. The empty asm hides that the bases are 5 * ld apart,
  // so the compiler keeps them instead of folding each row into its own offset register.
  __attribute__((always_inline)) void Advance(int64_t floats) {
    for (int g = 0; g < 3; ++g) {
      base[g] += floats * static_cast<int64_t>(sizeof(float));
      asm("" : "+r"(base[g]));
    }
  }
  template <int kRow>
  __attribute__((always_inline)) const float* Row(int64_t col) const {
    static_assert(kRow < 15);
    constexpr int d = kRow % 5;
    const char* b = base[kRow / 5] + col * static_cast<int64_t>(sizeof(float));
    const char* p = d == 0 ? b : d == 1 ? b + ld : d == 2 ? b + 2 * ld : d == 3 ? b + ld3 : b + 4 * ld;
    return reinterpret_cast<const float*>(p);
  }
};

// One K step of an R x NV tile: acc += a[0:R] (broadcast) x b[0:NV vectors]. kDirectA: row i's
// A value is at rows.Row<i>(col) (A in place); otherwise at a[i] (a panel).
template <class S, int R, int NV, bool kDirectA = false>
__attribute__((always_inline)) inline void TileStep(typename S::V (&acc)[R][NV], const float* a,
                                                    const DirectARows& rows, int64_t col, const float* b,
                                                    int64_t bs) {
  using V = typename S::V;
  constexpr int L = S::kLanes;
  V bv[NV];
#pragma GCC unroll 8
  for (int v = 0; v < NV; ++v) bv[v] = S::Load(b + v * L);
  __builtin_prefetch(b + kPrefetchB * bs, 0, 3);  // never faults, even past the end
  if constexpr (NV * L > 16) __builtin_prefetch(b + kPrefetchB * bs + 16, 0, 3);
  if constexpr (kDirectA) {
    // Row(I) needs I at compile time to pick its addressing mode.
    [&]<int... I>(std::integer_sequence<int, I...>) {
      (
          [&] {
            const V av = S::Broadcast(rows.template Row<I>(col));
#pragma GCC unroll 8
            for (int v = 0; v < NV; ++v) acc[I][v] = S::Fma(av, bv[v], acc[I][v]);
          }(),
          ...);
    }(std::make_integer_sequence<int, R>{});
  } else {
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i) {
      const V av = S::Broadcast(a + i);
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[i][v] = S::Fma(av, bv[v], acc[i][v]);
    }
  }
}

// The K loop of TileKernel: acc (and, with kSets > 1, the extra sets on alternating steps) +=
// A x B over t.kc steps. kPrefetch: also fetch one line of t.prefetch into L2 every
// 2^t.prefetch_shift steps (its own instantiation, so the loop without it has no test per step).
template <class S, int MR, int R, int NV, bool kDirectA, int kSets, bool kPrefetch>
__attribute__((always_inline)) inline void KLoop(typename S::V (&acc)[R][NV], typename S::V (&extra)[kSets][R][NV],
                                                 const F32GemmTile& t) {
  const float* a = t.a;
  const float* b = t.b;
  const int64_t bs = t.b_stride;
  const int64_t kc = t.kc;
  // Per K step A moves one panel row (MR floats) or, in place, one column.
  constexpr int64_t kAStep = kDirectA ? 1 : MR;
  DirectARows rows(a, kDirectA ? t.a_row_stride : 0);
  const char* const pf = reinterpret_cast<const char*>(t.prefetch);
  const int pf_shift = t.prefetch_shift;
  int64_t p = 0;
  if constexpr (kSets > 1) {
    for (; p + kSets <= kc; p += kSets) {
      if constexpr (kPrefetch) __builtin_prefetch(pf + (p >> pf_shift) * kPrefetchLineBytes, 0, 2);
      TileStep<S, R, NV, kDirectA>(acc, a, rows, 0, b, bs);
#pragma GCC unroll 4
      for (int s = 1; s < kSets; ++s) TileStep<S, R, NV, kDirectA>(extra[s], a + s * kAStep, rows, s, b + s * bs, bs);
      a += kSets * kAStep;
      if constexpr (kDirectA) rows.Advance(kSets);
      b += kSets * bs;
    }
  }
#pragma GCC unroll 2
  for (; p < kc; ++p) {
    if constexpr (kPrefetch) __builtin_prefetch(pf + (p >> pf_shift) * kPrefetchLineBytes, 0, 2);
    TileStep<S, R, NV, kDirectA>(acc, a, rows, 0, b, bs);
    a += kAStep;
    if constexpr (kDirectA) rows.Advance(1);
    b += bs;
  }
}

// R rows (R <= MR; the A panel still has MR floats per step) by NV vectors of columns. kDirectA:
// A is read in place, row-major with row stride t.a_row_stride (no packing; only R rows read).
template <class S, int MR, int R, int NV, bool kDirectA>
void TileKernel(const F32GemmTile& t) {
  using V = typename S::V;
  constexpr int L = S::kLanes;
  // A thin tile has few accumulators: one FMA chain each would wait out the FMA latency (4
  // cycles) every step. Independent sets over alternating steps keep 8 or more chains in flight
  // (a 1-row tile ran 3.5x slower per step than the full one); they are summed after the loop.
  constexpr int kSets = R * NV >= 8 ? 1 : R * NV >= 4 ? 2 : 4;
  V acc[R][NV];
  V extra[kSets][R][NV];
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
      acc[i][v] = S::Zero();
#pragma GCC unroll 4
      for (int s = 1; s < kSets; ++s) extra[s][i][v] = S::Zero();
    }

  // C's rows come from far away (other K blocks touched them long ago): start fetching now so
  // the loads and stores after the K loop hit L1.
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i) {
    __builtin_prefetch(t.c + i * t.ldc, 1, 3);
    __builtin_prefetch(t.c + i * t.ldc + NV * L - 1, 1, 3);
  }

  // The driver asks for a prefetch only with a packed A.
  if (!kDirectA && t.prefetch != nullptr)
    KLoop<S, MR, R, NV, kDirectA, kSets, !kDirectA>(acc, extra, t);
  else
    KLoop<S, MR, R, NV, kDirectA, kSets, false>(acc, extra, t);
  if constexpr (kSets > 1) {
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i)
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v)
#pragma GCC unroll 4
        for (int s = 1; s < kSets; ++s) acc[i][v] = S::Add(acc[i][v], extra[s][i][v]);
  }

  const V alpha = S::Set1(t.alpha);
  const V beta = S::Set1(t.beta);
  const bool read_c = t.beta != 0.0f;
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i) {
    float* crow = t.c + i * t.ldc;
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
      const int cols = t.nr - v * L;
      if (cols <= 0) break;
      V r = S::Mul(acc[i][v], alpha);
      if (read_c) r = S::Fma(S::LoadN(crow + v * L, cols), beta, r);
      if (t.finish) {
        if (t.bias_row != nullptr) r = S::Add(r, S::Set1(t.bias_row[i]));
        if (t.bias_col != nullptr) r = S::Add(r, S::LoadN(t.bias_col + v * L, cols));
        if (t.residual != nullptr) r = S::Add(r, S::LoadN(t.residual + i * t.ldr + v * L, cols));
        r = ActivateLinear<S>(r, t);
      }
      S::StoreN(crow + v * L, r, cols);
    }
  }
  // The tile is in L1 now: finish transcendental activations before moving on.
  if (t.finish && IsTranscendental(t.activation)) ActivateBlock<S>(t.activation, t.c, t.ldc, R, t.nr);
}

// Function tables indexed by the tile's row count - 1.
template <class S, int MR, int NV>
struct TileTable {
  F32GemmTileFn fns[MR];
};

template <class S, int MR, int NV, bool kDirectA, int... Rm1>
constexpr TileTable<S, MR, NV> MakeTileTable(std::integer_sequence<int, Rm1...>) {
  return TileTable<S, MR, NV>{{&TileKernel<S, MR, Rm1 + 1, NV, kDirectA>...}};
}

// Dispatches a tile to the kernel of exactly its row count, and of half the width when the
// columns fit in NV - 1 vectors (edge tiles cost what they compute).
template <class S, int MR, int NV, bool kDirectA>
void TileOf(const F32GemmTile& t) {
  static constexpr TileTable<S, MR, NV> kFull =
      MakeTileTable<S, MR, NV, kDirectA>(std::make_integer_sequence<int, MR>{});
  if constexpr (NV > 1) {
    static constexpr TileTable<S, MR, NV - 1> kNarrow =
        MakeTileTable<S, MR, NV - 1, kDirectA>(std::make_integer_sequence<int, MR>{});
    if (t.nr <= (NV - 1) * S::kLanes) return kNarrow.fns[t.mr - 1](t);
  }
  kFull.fns[t.mr - 1](t);
}

template <class S, int MR, int NV>
void Tile(const F32GemmTile& t) {
  if (t.a_row_stride != 0) return TileOf<S, MR, NV, true>(t);
  TileOf<S, MR, NV, false>(t);
}

// ---- packing ----
// Transposing packs go through S::Transpose (an L x L block in registers); plain copies are
// vector loads and stores. Rows or columns past the valid ones are written as zeros.

// op(A) rows [0, rows) of a row-major A: each MR x L block is read as rows and transposed.
template <class S, int MR>
void PackARows(const float* a, int64_t lda, int64_t rows, int64_t kc, float* out) {
  using V = typename S::V;
  constexpr int L = S::kLanes;
  for (int64_t i0 = 0; i0 < rows; i0 += MR, out += kc * MR) {
    const int64_t r = rows - i0 < MR ? rows - i0 : MR;
    for (int64_t p0 = 0; p0 < kc; p0 += L) {
      const int steps = kc - p0 < L ? static_cast<int>(kc - p0) : L;
#pragma GCC unroll 4
      for (int ig = 0; ig < MR; ig += L) {
        V block[L];
#pragma GCC unroll 16
        for (int i = 0; i < L; ++i)
          block[i] = ig + i < r ? S::LoadN(a + (i0 + ig + i) * lda + p0, steps) : S::Zero();
        S::Transpose(block);
        const int width = MR - ig < L ? MR - ig : L;
        for (int q = 0; q < steps; ++q) S::StoreN(out + (p0 + q) * MR + ig, block[q], width);
      }
    }
  }
}

template <class S, int MR>
void PackA(bool trans, const float* a, int64_t lda, int64_t rows, int64_t kc, float* out) {
  if (!trans) return PackARows<S, MR>(a, lda, rows, kc, out);
  constexpr int L = S::kLanes;
  // A stored [K, M]: each step's MR values are contiguous.
  for (int64_t i0 = 0; i0 < rows; i0 += MR, out += kc * MR) {
    const int r = rows - i0 < MR ? static_cast<int>(rows - i0) : MR;
    for (int64_t p = 0; p < kc; ++p) {
      const float* src = a + p * lda + i0;
      float* dst = out + p * MR;
#pragma GCC unroll 4
      for (int i = 0; i < MR; i += L) {
        const int width = MR - i < L ? MR - i : L;
        S::StoreN(dst + i, r - i > 0 ? S::LoadN(src + i, r - i) : S::Zero(), width);
      }
    }
  }
}

template <class S, int NR>
void PackB(bool trans, const float* b, int64_t ldb, int64_t cols, int64_t kc, float* out) {
  using V = typename S::V;
  constexpr int L = S::kLanes;
  if (!trans) {
    // Row by row, so B is read sequentially; each row scatters into the panels.
    for (int64_t p = 0; p < kc; ++p) {
      const float* src = b + p * ldb;
      float* dst = out + p * NR;
      for (int64_t j0 = 0; j0 < cols; j0 += NR, dst += kc * NR) {
        const int c = cols - j0 < NR ? static_cast<int>(cols - j0) : NR;
#pragma GCC unroll 8
        for (int j = 0; j < NR; j += L) S::StoreN(dst + j, c > j ? S::LoadN(src + j0 + j, c - j) : S::Zero(), L);
      }
    }
    return;
  }
  // B stored [N, K]: transpose L columns x L steps at a time.
  for (int64_t j0 = 0; j0 < cols; j0 += NR, out += kc * NR) {
    const int64_t c = cols - j0 < NR ? cols - j0 : NR;
    for (int64_t p0 = 0; p0 < kc; p0 += L) {
      const int steps = kc - p0 < L ? static_cast<int>(kc - p0) : L;
#pragma GCC unroll 8
      for (int jg = 0; jg < NR; jg += L) {
        V block[L];
#pragma GCC unroll 16
        for (int j = 0; j < L; ++j)
          block[j] = jg + j < c ? S::LoadN(b + (j0 + jg + j) * ldb + p0, steps) : S::Zero();
        S::Transpose(block);
        for (int q = 0; q < steps; ++q) S::StoreN(out + (p0 + q) * NR + jg, block[q], L);
      }
    }
  }
}

}  // namespace
}  // namespace onyx::linalg
