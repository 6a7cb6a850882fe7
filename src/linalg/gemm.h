// Single-precision matrix multiply, row-major:
//   C[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * C
// op(X) is X or its transpose. beta == 0 means C is write-only (its old contents may be NaN).
//
// Sgemm packs both operands into cache blocks (GotoBLAS/BLIS) and runs the best microkernel the
// CPU supports (f32_gemm_config.cc). A constant operand can be packed once (PackedB, PackedA)
// and reused by every call. An optional GemmEpilogue is applied while each C tile is still in
// registers or L1, so fused bias / residual / activation never make a second pass over C.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace onyx {
class ThreadPool;
}

namespace onyx::linalg {

struct F32GemmKernel;

// Applied to each finished element, in this order:
//   v = alpha * (A B)[i,j] + beta * C[i,j] + bias_per_row[i] + bias_per_col[j] + residual[i,j]
//   C[i,j] = activation(v)
// Null pointers are skipped. residual is row-major with leading dimension ldr and must not
// overlap C.
struct GemmEpilogue {
  enum Activation {
    kNone,
    kRelu,
    kClip,         // min(max(v, alpha), beta)
    kLeakyRelu,    // v < 0 ? alpha * v : v
    kHardSigmoid,  // max(0, min(1, alpha * v + beta))
    kSigmoid,
    kTanh,
    kSilu,      // v * sigmoid(v)
    kGeluErf,   // 0.5 v (1 + erf(v / sqrt(2)))
    kGeluTanh,  // 0.5 v (1 + tanh(sqrt(2 / pi) (v + 0.044715 v^3)))
  };
  const float* bias_per_col = nullptr;  // [N]
  const float* bias_per_row = nullptr;  // [M]
  Activation activation = kNone;
  float alpha = 0.0f;  // activation parameters
  float beta = 0.0f;
  const float* residual = nullptr;  // [M, N] with leading dimension ldr
  int64_t ldr = 0;
};

void Sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
           const float* b, int64_t ldb, float beta, float* c, int64_t ldc, ThreadPool* pool);

// Whether Sgemm takes its few-columns path (each row of A streamed through dot products with
// B's columns, nothing packed) rather than the blocked microkernel; the kernels' profile names it.
bool SgemmTakesFewColumnsPath(bool trans_a, int64_t n, int64_t k);

// As above with a fused epilogue (null: none).
void Sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
           const float* b, int64_t ldb, float beta, float* c, int64_t ldc, ThreadPool* pool,
           const GemmEpilogue* epilogue);

// 64-byte aligned float storage owned by a packed operand, or a read-only view of a pack made
// earlier (a creation cache's memory map) kept alive by `owner`.
class AlignedFloats {
 public:
  AlignedFloats() = default;
  explicit AlignedFloats(size_t count);
  AlignedFloats(const float* view, size_t count, std::shared_ptr<const void> owner)
      : data_(const_cast<float*>(view)), size_(count), owner_(std::move(owner)) {}
  ~AlignedFloats();
  AlignedFloats(AlignedFloats&& other) noexcept;
  AlignedFloats& operator=(AlignedFloats&& other) noexcept;
  AlignedFloats(const AlignedFloats&) = delete;
  AlignedFloats& operator=(const AlignedFloats&) = delete;

  float* data() { return data_; }
  const float* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  float* data_ = nullptr;
  size_t size_ = 0;
  std::shared_ptr<const void> owner_;  // set for a view: data_ is not ours to free
};

// Where a pack's floats come from. Empty: fresh memory, filled by the packer. Otherwise called
// with the pack's form (what makes two packs of the same weight differ: engine, ISA kernel,
// blocking), its float count and the filler; it returns 64-byte aligned floats, filled by
// calling `fill` or taken from an earlier creation (the session's creation cache).
using PackSource =
    std::function<AlignedFloats(const std::string& form, size_t count, const std::function<void(float*)>& fill)>;

// Where the floats of a pack no PackSource may keep come from (int8 packs: their column sums are
// computed while packing). Empty: fresh memory from AlignedFloats(count).
using PackMemory = std::function<AlignedFloats(size_t count)>;
AlignedFloats FreshPack(const PackMemory* memory, size_t count);

// The pack's floats from `source`, or fresh ones filled here when it is null or empty.
AlignedFloats MakePack(const PackSource* source, const std::string& form, size_t count,
                       const std::function<void(float*)>& fill);

// The right operand op(B) [K, N] packed once (a constant weight), for SgemmPackedB. b is [K, N]
// row-major, or [N, K] when trans_b. The layout belongs to the microkernel selected when the
// pack is made; SgemmPackedB always runs that same microkernel.
class PackedB {
 public:
  PackedB() = default;
  PackedB(bool trans_b, int64_t k, int64_t n, const float* b, int64_t ldb, ThreadPool* pool = nullptr,
          const PackSource* source = nullptr);
  // The same pack from float16 bits (IEEE binary16), each panel widened exactly just before it
  // is packed (f32_packed_b_half.cc): bit for bit the pack of the widened matrix, without a
  // float copy of all of it.
  PackedB(bool trans_b, int64_t k, int64_t n, const uint16_t* b_half, int64_t ldb, ThreadPool* pool = nullptr,
          const PackSource* source = nullptr);

  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  bool empty() const { return kernel_ == nullptr; }
  size_t bytes() const { return data_.size() * sizeof(float); }
  const char* kernel_name() const;

 private:
  friend struct PackedAccess;
  // Packs op(B) panel by panel: panel(kernel, k0, j, kcb, cols, out) packs op(B)[k0:k0+kcb,
  // j:j+cols] into `out` (the kernel's pack_b of the source at that corner).
  using PanelPacker = std::function<void(const F32GemmKernel&, int64_t k0, int64_t j, int64_t kcb, int64_t cols,
                                         float* out)>;
  void Pack(bool trans_b, const PanelPacker& panel, ThreadPool* pool, const PackSource* source);

  const F32GemmKernel* kernel_ = nullptr;
  int64_t k_ = 0, n_ = 0, kc_ = 0;
  AlignedFloats data_;
};

// The left operand op(A) [M, K] packed once (convolution weights [Cout, Cin*kh*kw]).
// a is [M, K] row-major, or [K, M] when trans_a.
class PackedA {
 public:
  PackedA() = default;
  PackedA(bool trans_a, int64_t m, int64_t k, const float* a, int64_t lda, ThreadPool* pool = nullptr,
          const PackSource* source = nullptr, const std::string& form_prefix = "");

  int64_t m() const { return m_; }
  int64_t k() const { return k_; }
  bool empty() const { return kernel_ == nullptr; }
  size_t bytes() const { return data_.size() * sizeof(float); }
  const char* kernel_name() const;

 private:
  friend struct PackedAccess;
  const F32GemmKernel* kernel_ = nullptr;
  int64_t m_ = 0, k_ = 0, kc_ = 0;
  AlignedFloats data_;
};

// C = alpha * op(A) * B + beta * C with B pre-packed; b.k() == k and b.n() == n (else
// std::invalid_argument).
void SgemmPackedB(bool trans_a, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                  const PackedB& b, float beta, float* c, int64_t ldc, ThreadPool* pool,
                  const GemmEpilogue* epilogue = nullptr);

// C = alpha * A * op(B) + beta * C with A pre-packed; a.m() == m and a.k() == k.
void SgemmPackedA(bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const PackedA& a, const float* b,
                  int64_t ldb, float beta, float* c, int64_t ldc, ThreadPool* pool,
                  const GemmEpilogue* epilogue = nullptr);

// Microkernel selection. The best supported ISA is used unless ForceIsa (or the environment
// variable ONYX_LINALG_ISA, read once) names another: "avx512", "avx2" or "scalar". ForceIsa
// returns false (and changes nothing) for an unknown ISA or one this CPU lacks; "" or "auto"
// restores the default. Meant for tests and benchmarks; packs keep the ISA they were made with.
bool ForceIsa(std::string_view isa);
std::string SgemmIsa();                       // the ISA Sgemm uses now
std::string SgemmKernelName();                // e.g. "f32_gemm_avx512_14x32"
std::vector<std::string> SupportedSgemmIsas();  // best first, "scalar" last

// The plain reference used by tests as the oracle for optimized variants.
void SgemmReference(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                    int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

}  // namespace onyx::linalg
