// Gemm: Y = alpha * op(A) * op(B) + beta * C, op() transposing when transA / transB is set.
// Opsets 1 and 6: C is required and must be [M, N] unless the `broadcast` attribute is set;
// 7 onwards: C broadcasts unidirectionally to [M, N]; 11 onwards: C is optional; 9 and 13 add
// integer types and bfloat16. The float path runs on linalg::Sgemm.
#include "providers/cpu/kernels/linalg/bf16_weights.h"
#include "providers/cpu/kernels/linalg/packed_weights.h"
#include "providers/cpu/kernels/linalg/typed_gemm.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

class Gemm final : public OpKernel {
 public:
  explicit Gemm(const KernelInfo& info)
      : alpha_(info.GetFloatOr("alpha", 1.0f)),
        beta_(info.GetFloatOr("beta", 1.0f)),
        trans_a_(info.GetIntOr("transA", 0) != 0),
        trans_b_(info.GetIntOr("transB", 0) != 0),
        legacy_(info.opset() < 7),
        legacy_broadcast_(info.opset() < 7 && info.GetIntOr("broadcast", 0) != 0),
        c_optional_(info.opset() >= 11),
        packed_b_(linalg_kernels::WantsBf16B(info, 1)
                      ? nullptr
                      : linalg_kernels::PackConstantB(info, 1, info.GetIntOr("transB", 0) != 0)),
        bf16_b_(linalg_kernels::PackConstantBf16B(info, 1, info.GetIntOr("transB", 0) != 0)),
        microkernel_(linalg::SgemmKernelName()),
        isa_(linalg::SgemmIsa()) {
    if (!c_optional_ && !info.has_input(2)) info.Fail("input C is required before opset 11");
    // A constant bias row [N] (or [1, N]) with beta 1 is added by the GEMM's epilogue.
    const Tensor* c = info.ConstantInput(2);
    const int64_t packed_n = packed_b_ ? packed_b_->n() : bf16_b_ ? bf16_b_->n() : -1;
    if (packed_n >= 0 && c && c->dtype() == DataType::kFloat && beta_ == 1.0f &&
        ((c->rank() == 1 && c->dim(0) == packed_n) || (c->rank() == 2 && c->dim(0) == 1 && c->dim(1) == packed_n)))
      bias_ = *c;
  }

  bool ReadsConstantInputAtRun(size_t input) const override {
    return !((input == 1 && (packed_b_ || bf16_b_)) || (input == 2 && bias_.defined()));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.required_input(0);
    if (packed_b_ || bf16_b_) return ComputeWithPackedB(ctx, a);
    const Tensor& b = ctx.required_input(1);
    const Tensor* c = c_optional_ ? ctx.input(2) : &ctx.required_input(2);
    if (a.rank() != 2 || b.rank() != 2) ctx.Fail("A and B must be 2-D");
    if (a.dtype() != b.dtype() || (c && c->dtype() != a.dtype()))
      ctx.Fail("A, B and C must have the same element type");
    const int64_t m = trans_a_ ? a.dim(1) : a.dim(0);
    const int64_t k = trans_a_ ? a.dim(0) : a.dim(1);
    const int64_t kb = trans_b_ ? b.dim(1) : b.dim(0);
    const int64_t n = trans_b_ ? b.dim(0) : b.dim(1);
    if (k != kb) ctx.Fail(StrCat("inner dimensions differ: ", k, " vs ", kb));
    // C's element strides along the rows and columns of Y (0 where it is broadcast).
    int64_t c_row_stride = 0, c_col_stride = 0;
    if (c) {
      const Shape& cs = c->shape();
      const bool exact = cs.size() == 2 && cs[0] == m && cs[1] == n;
      if (legacy_ && !legacy_broadcast_ && !exact)
        ctx.Fail(StrCat("C must be [", m, ",", n, "] when the broadcast attribute is 0"));
      if (cs.size() > 2) ctx.Fail("C must have rank <= 2");
      const int64_t c_rows = cs.size() == 2 ? cs[0] : 1;
      const int64_t c_cols = cs.empty() ? 1 : cs.back();
      if ((c_rows != 1 && c_rows != m) || (c_cols != 1 && c_cols != n))
        ctx.Fail(StrCat("C of shape ", ShapeToString(cs), " does not broadcast to [", m, ",", n, "]"));
      c_col_stride = c_cols == 1 ? 0 : 1;
      c_row_stride = c_rows == 1 ? 0 : c_cols;
    }
    Tensor& y = ctx.AllocateOutput(0, a.dtype(), {m, n});
    if (y.size() == 0) return;
    const bool use_c = c != nullptr && beta_ != 0.0f;
    Dispatch(linalg_kernels::GemmTypes{}, a.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* py = y.data<T>();
      if (use_c) {
        const T* pc = c->data<T>();
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) py[i * n + j] = pc[i * c_row_stride + j * c_col_stride];
      }
      if (k == 0) {  // an empty product: Y = beta * C
        for (int64_t i = 0; i < m * n; ++i)
          py[i] = use_c ? FromCompute<T>(static_cast<ComputeType<T>>(beta_ * ToCompute(py[i]))) : T(0.0f);
        return;
      }
      const KernelVariant v = linalg_kernels::TypedGemmVariant<T>(trans_a_, n, k, microkernel_, isa_);
      NoteKernelVariant(v.algorithm, v.isa);
      linalg_kernels::TypedGemm<T>(trans_a_, trans_b_, m, n, k, alpha_, a.data<T>(), a.dim(1), b.data<T>(), b.dim(1),
                                   use_c ? beta_ : 0.0f, py, n, ctx.thread_pool());
    });
  }

 private:
  // B is a constant float matrix packed at creation; C is a constant bias row (added by the
  // GEMM's epilogue) or any C read at run time.
  void ComputeWithPackedB(KernelContext& ctx, const Tensor& a) const {
    if (a.dtype() != DataType::kFloat) ctx.Fail(StrCat("A is ", DataTypeName(a.dtype()), " but B is float"));
    if (a.rank() != 2) ctx.Fail("A must be 2-D");
    const int64_t m = trans_a_ ? a.dim(1) : a.dim(0);
    const int64_t k = trans_a_ ? a.dim(0) : a.dim(1);
    const int64_t n = bf16_b_ ? bf16_b_->n() : packed_b_->n(), kb = bf16_b_ ? bf16_b_->k() : packed_b_->k();
    if (k != kb) ctx.Fail(StrCat("inner dimensions differ: ", k, " vs ", kb));
    Tensor& y = ctx.AllocateOutput(0, DataType::kFloat, {m, n});
    if (y.size() == 0) return;
    linalg::GemmEpilogue epilogue;
    float beta = 0.0f;
    const Tensor* c = bias_.defined() ? nullptr : ctx.input(2);
    if (bias_.defined()) {
      epilogue.bias_per_col = bias_.data<float>();
    } else if (c != nullptr && beta_ != 0.0f) {
      const Shape& cs = c->shape();
      const int64_t c_rows = cs.size() == 2 ? cs[0] : 1, c_cols = cs.empty() ? 1 : cs.back();
      if (c->dtype() != DataType::kFloat || cs.size() > 2 || (c_rows != 1 && c_rows != m) || (c_cols != 1 && c_cols != n) ||
          (legacy_ && !legacy_broadcast_ && !(c_rows == m && c_cols == n)))
        ctx.Fail(StrCat("C ", c->Describe(), " does not broadcast to [", m, ",", n, "]"));
      const int64_t row_stride = c_rows == 1 ? 0 : c_cols, col_stride = c_cols == 1 ? 0 : 1;
      float* py = y.data<float>();
      const float* pc = c->data<float>();
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) py[i * n + j] = pc[i * row_stride + j * col_stride];
      beta = beta_;
    }
    if (k == 0) {
      float* py = y.data<float>();
      for (int64_t i = 0; i < m * n; ++i) py[i] = beta * py[i] + (bias_.defined() ? bias_.data<float>()[i % n] : 0.0f);
      return;
    }
    if (bf16_b_) {  // a bfloat16 model's weight (linalg::kBf16Attribute)
      NoteKernelVariant("gemm packed bf16 B", linalg::Bf16GemmKernelName());
      linalg::Bf16GemmPackedB(trans_a_, m, n, k, alpha_, a.data<float>(), a.dim(1), *bf16_b_, beta, y.data<float>(), n,
                              ctx.thread_pool(), bias_.defined() ? &epilogue : nullptr);
      return;
    }
    NoteKernelVariant("gemm packed B", packed_b_->kernel_name());
    linalg::SgemmPackedB(trans_a_, m, n, k, alpha_, a.data<float>(), a.dim(1), *packed_b_, beta, y.data<float>(), n,
                         ctx.thread_pool(), bias_.defined() ? &epilogue : nullptr);
  }

  float alpha_;
  float beta_;
  bool trans_a_;
  bool trans_b_;
  bool legacy_;
  bool legacy_broadcast_;
  bool c_optional_;
  std::shared_ptr<const linalg::PackedB> packed_b_;  // B when it is a constant float matrix
  std::shared_ptr<const linalg::PackedBf16B> bf16_b_;  // instead of packed_b_ for a bfloat16 model
  Tensor bias_;                                       // C when the epilogue adds it
  std::string microkernel_, isa_;  // the SGEMM's when the kernel was made, for the profile
};

ONYX_CPU_KERNEL("Gemm", 1, 6, Gemm);
ONYX_CPU_KERNEL("Gemm", 7, 8, Gemm);
ONYX_CPU_KERNEL("Gemm", 9, 10, Gemm);
ONYX_CPU_KERNEL("Gemm", 11, 12, Gemm);
ONYX_CPU_KERNEL("Gemm", 13, kOpsetMax, Gemm);

}  // namespace
}  // namespace onyx
