// 8-bit integer matrix multiply with int32 accumulation, row-major:
//   acc[i, j] = sum_k (A[i, k] - a_zero[i]) * (B[k, j] - b_zero[j])
// A and B each int8 or uint8 (u8 x s8, s8 x s8, u8 x u8, s8 x u8 all exact); zero points per
// tensor or per row of A / per column of B. The sum wraps in int32 as ONNX allows.
//
// B is packed once (a constant weight, or per call) for the microkernel the CPU supports best
// (q8_gemm_config.cc); its column sums are kept so the zero points cost one multiply-add per
// output, not a pass over the operands. A finished int32 tile goes through Q8Output while it is
// in L1: stored as int32, dequantized to float, or requantized to int8/uint8.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "linalg/gemm.h"

namespace onyx::linalg {

struct Q8GemmKernel;

// op(B) [K, N]: b is [K, N] row-major, or [N, K] when trans_b. zero_points: one value, or N
// when zero_per_column (null: 0). Codes are int8 when b_signed, else uint8.
class PackedQ8B {
 public:
  PackedQ8B() = default;
  // memory: where the pack's bytes come from (the session's placement), null for fresh memory.
  PackedQ8B(bool trans_b, int64_t k, int64_t n, const void* b, bool b_signed, int64_t ldb, const int32_t* zero_points,
            bool zero_per_column, ThreadPool* pool = nullptr, const PackMemory* memory = nullptr);

  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  bool empty() const { return kernel_ == nullptr; }
  size_t bytes() const { return data_.size() * sizeof(float); }
  const char* kernel_name() const;

 private:
  friend struct Q8PackedAccess;
  const Q8GemmKernel* kernel_ = nullptr;
  int64_t k_ = 0, n_ = 0;
  AlignedFloats data_;  // the packed codes, viewed as bytes
  // Per column: the sum over k of the stored codes, and the stored zero point (see q8_gemm.cc).
  std::vector<int32_t> col_sums_, col_zero_;
};

// What becomes of acc[i, j] (C is [M, N] with leading dimension ldc, or C^T when transposed:
// element (i, j) at c[j * ldc + i], the NCHW output of a convolution run as pixels x channels).
struct Q8Output {
  enum Kind {
    kInt32,      // c = acc
    kFloat,      // c = float(acc) * scale[j] + bias[j]
    kQuantized,  // c = clamp(nearbyint(float(acc + bias_int[j]) * scale[j]) + zero_point), int8 or uint8
    // Q8GemmW only: kFloat's value v (with lo / hi), then DynamicQuantizeLinear's uint8 code of it,
    // Q8QuantizeU8's operations: clamp(nearbyint(v / code_scale) + zero_point, 0, 255), NaN -> 0.
    kFloatCodes,
  };
  Kind kind = kInt32;
  void* c = nullptr;
  int64_t ldc = 0;
  bool transposed = false;
  const float* scale = nullptr;  // kFloat / kQuantized: one value, or N when scale_per_column
  bool scale_per_column = false;
  const float* bias = nullptr;         // kFloat: null or [N]
  const int32_t* bias_int = nullptr;   // kQuantized: null or [N]
  int32_t zero_point = 0;              // kQuantized, kFloatCodes (0..255)
  float code_scale = 1.0f;             // kFloatCodes: the codes' scale (a divisor, as Q8QuantizeU8's)
  bool out_signed = false;             // kQuantized: int8 (else uint8)
  // Q8GemmW's kFloat only (Q8Gemm refuses others): the value then clamped to [lo, hi] as Clip
  // compares (a NaN passes; infinite bounds change nothing), a fused Relu or Clip.
  float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
  // Q8GemmW's kFloat only: when not null, range[0] = min(range[0], every value written) and
  // range[1] = max(range[1], ...), NaNs skipped (the caller starts it at {0, 0}: the range
  // DynamicQuantizeLinear takes of the next layer's input, without a pass over it).
  float* range = nullptr;
};

// op(B) packed: acc = (A - a_zero) x (B - b_zero), then `out`. a is [M, K] row-major;
// a_zero_points: one value, or M when a_zero_per_row (null: 0).
void Q8Gemm(int64_t m, const void* a, bool a_signed, int64_t lda, const int32_t* a_zero_points, bool a_zero_per_row,
            const PackedQ8B& b, const Q8Output& out, ThreadPool* pool);

// The weight-stationary form, for NCHW convolutions: W [M, K] (output channels by C x kernel,
// row-major, ONNX's weight order) is packed once as the left operand and the right operand X
// [K, N] (channels or im2col rows by pixels, row-major) is read per call, so C [M, N] is the
// NCHW output itself, written in contiguous runs with no transposes:
//   acc[i, j] = sum_k (W[i, k] - w_zero[i]) * (X[k, j] - x_zero)
// Q8Output::kInt32, kQuantized, kFloat and kFloatCodes; there `scale` (one, or M when scale_per_column),
// `bias_int` and `bias` ([M]) are per row of C, the output channel; `transposed` must be false.
// kFloat writes q8_to_float.h's value from the registers (float(acc) * scale, then + bias when
// not null, each rounded, never one fused multiply-add; then clamped to [lo, hi]), so a
// dynamically quantized conv's float output needs no int32 pass. One
// microkernel, AVX-512 VNNI (q8_gemm_w_avx512_vnni_8x32.cc): Q8GemmWAvailable says whether the
// int8 selection runs it now (AVX-512 VNNI or AMX selected); elsewhere the callers use Q8Gemm.
class PackedQ8W {
 public:
  PackedQ8W() = default;
  // memory: where the pack goes (the session's placement; null: fresh memory, gemm.h's FreshPack).
  PackedQ8W(int64_t m, int64_t k, const void* w, bool w_signed, const int32_t* zero_points, bool zero_per_row,
            const PackMemory* memory = nullptr);

  int64_t m() const { return m_; }
  int64_t k() const { return k_; }
  bool empty() const { return !packed_; }
  size_t bytes() const { return data_.size() * sizeof(float); }

 private:
  friend struct Q8PackedWAccess;
  bool packed_ = false;
  int64_t m_ = 0, k_ = 0;
  AlignedFloats data_;  // [M / 8][K / 4][8][4] int8 codes (uint8 W stored - 128), viewed as bytes
  // Per row: the sum over k of the stored codes, and the stored zero point.
  std::vector<int32_t> row_sums_, row_zero_;
};

bool Q8GemmWAvailable();

// x is [K, N] with row stride ldx, int8 when x_signed else uint8, zero point x_zero.
void Q8GemmW(const PackedQ8W& w, int64_t n, const void* x, bool x_signed, int64_t ldx, int32_t x_zero,
             const Q8Output& out, ThreadPool* pool);
// Only rows [row_begin, row_end) of C (row_begin a multiple of 8, row_end at most M; other rows
// untouched), each as Q8GemmW writes it: a task's share of the output channels.
void Q8GemmWRows(const PackedQ8W& w, int64_t row_begin, int64_t row_end, int64_t n, const void* x, bool x_signed,
                 int64_t ldx, int32_t x_zero, const Q8Output& out, ThreadPool* pool);

// Microkernel selection, best first: "amx" (AMX-INT8 tiles, where Linux grants the tile state),
// "avx512vnni", "avx2", "scalar". The default follows the SGEMM's ISA (ForceIsa /
// ONYX_LINALG_ISA), taking the best int8 kernel within it (AMX counts as AVX-512); ONYX_Q8_ISA
// names one for the whole process, ForceQ8Isa one from now on (false, changing nothing, when
// unknown or unsupported; "" or "auto" restores the default). Meant for tests and benchmarks;
// packs keep the kernel they were made with.
bool ForceQ8Isa(std::string_view isa);
std::string Q8GemmKernelName();
std::vector<std::string> SupportedQ8Isas();

// The plain reference, the oracle for the microkernels: int32 acc as above into c [M, N].
void Q8GemmReference(int64_t m, int64_t n, int64_t k, const void* a, bool a_signed, int64_t lda,
                     const int32_t* a_zero_points, bool a_zero_per_row, bool trans_b, const void* b, bool b_signed,
                     int64_t ldb, const int32_t* b_zero_points, bool b_zero_per_column, int32_t* c, int64_t ldc);

}  // namespace onyx::linalg
