// com.microsoft.FusedMatMul: Y = alpha * op(A) . op(B) with numpy batch broadcasting, where
// transA/transB transpose the last two dims and transBatchA/transBatchB take the matrix rows
// from dim 0 instead (A (d0, d1..dn-2, dn-1) is read as batches d1..dn-2 of (d0, dn-1)
// matrices) without moving any data: every batch is one strided linalg::Sgemm. Transposes
// are ignored for 1-D operands, as in ONNX Runtime. float16/bfloat16 compute in float; double
// in double.
#include <algorithm>
#include <memory>
#include <vector>

#include "base/type_traits.h"
#include "linalg/gemm.h"
#include "ops/broadcast.h"
#include "platform/thread_pool.h"
#include "providers/cpu/kernels/contrib/attention_core.h"
#include "providers/cpu/kernels/linalg/batched_gemm.h"
#include "providers/cpu/kernels/linalg/bf16_weights.h"
#include "providers/cpu/kernels/linalg/packed_weights.h"
#include "providers/kernel.h"
#include "providers/kernel_variant.h"

namespace onyx::contrib {
namespace {

// One operand as batches of a stored [rows, cols] matrix with leading dimension ld.
struct Operand {
  Shape batch;
  int64_t rows = 1, cols = 1, ld = 1;
  int64_t batch_unit = 0;  // element offset between consecutive batch entries
  bool trans = false;
};

Operand Describe(const Shape& dims, bool trans, bool trans_batch, bool is_b) {
  Operand op;
  const size_t r = dims.size();
  if (r == 1) {  // vector: a row of A or a column of B; transposes ignored
    op.rows = is_b ? dims[0] : 1;
    op.cols = is_b ? 1 : dims[0];
    op.ld = op.cols;
    return op;
  }
  op.trans = trans;
  if (trans_batch && r >= 3) {
    op.batch.assign(dims.begin() + 1, dims.end() - 1);
    op.rows = dims[0];
    op.cols = dims[r - 1];
    op.ld = ShapeSize(Shape(dims.begin() + 1, dims.end()));
    op.batch_unit = op.cols;
  } else {
    op.batch.assign(dims.begin(), dims.end() - 2);
    op.rows = dims[r - 2];
    op.cols = dims[r - 1];
    op.ld = op.cols;
    op.batch_unit = op.rows * op.cols;
  }
  return op;
}

template <typename C>
void PlainGemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, C alpha, const C* a, int64_t lda, const C* b,
               int64_t ldb, C* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      C acc = 0;
      for (int64_t p = 0; p < k; ++p) acc += (ta ? a[p * lda + i] : a[i * lda + p]) * (tb ? b[j * ldb + p] : b[p * ldb + j]);
      c[i * ldc + j] = alpha * acc;
    }
}

class FusedMatMul final : public OpKernel {
 public:
  explicit FusedMatMul(const KernelInfo& info)
      : alpha_(info.GetFloatOr("alpha", 1.0f)),
        trans_a_(info.GetIntOr("transA", 0) != 0),
        trans_b_(info.GetIntOr("transB", 0) != 0),
        trans_batch_a_(info.GetIntOr("transBatchA", 0) != 0),
        trans_batch_b_(info.GetIntOr("transBatchB", 0) != 0),
        packed_b_(linalg_kernels::WantsBf16B(info, 1) ? nullptr : linalg_kernels::PackConstantB(info, 1, trans_b_)),
        bf16_b_(linalg_kernels::PackConstantBf16B(info, 1, trans_b_)) {}

  bool ReadsConstantInputAtRun(size_t input) const override { return !(input == 1 && (packed_b_ || bf16_b_)); }

  void Compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.required_input(0);
    if (packed_b_ || bf16_b_) return ComputePackedB(ctx, a);
    const Tensor& b = ctx.required_input(1);
    if (a.dtype() != b.dtype()) ctx.Fail("A and B must have the same element type");
    if (a.rank() == 0 || b.rank() == 0) ctx.Fail("A and B must have rank >= 1");
    const Operand oa = Describe(a.shape(), trans_a_, trans_batch_a_, false);
    const Operand ob = Describe(b.shape(), trans_b_, trans_batch_b_, true);
    const int64_t M = oa.trans ? oa.cols : oa.rows, K = oa.trans ? oa.rows : oa.cols;
    const int64_t Kb = ob.trans ? ob.cols : ob.rows, N = ob.trans ? ob.rows : ob.cols;
    if (K != Kb) ctx.Fail(StrCat("inner dimensions differ: ", K, " vs ", Kb));
    const Shape batch = BroadcastShapes({oa.batch, ob.batch});
    Shape out_shape = batch;
    if (a.rank() > 1) out_shape.push_back(M);
    if (b.rank() > 1) out_shape.push_back(N);
    Tensor& y = ctx.AllocateOutput(0, a.dtype(), out_shape);
    if (y.size() == 0) return;
    const int64_t batches = ShapeSize(batch);
    const auto a_strides = BroadcastStrides(oa.batch, batch);
    const auto b_strides = BroadcastStrides(ob.batch, batch);
    auto offsets = [&](int64_t bi, int64_t& ao, int64_t& bo) {
      ao = bo = 0;
      int64_t rem = bi;
      for (size_t d = batch.size(); d-- > 0;) {
        const int64_t idx = rem % batch[d];
        rem /= batch[d];
        ao += idx * a_strides[d];
        bo += idx * b_strides[d];
      }
      ao *= oa.batch_unit;
      bo *= ob.batch_unit;
    };
    const double cost = static_cast<double>(M) * N * std::max<int64_t>(K, 1);
    if (a.dtype() == DataType::kDouble) {
      ThreadPool::For(ctx.thread_pool(), batches, cost, [&](int64_t begin, int64_t end) {
        for (int64_t bi = begin; bi < end; ++bi) {
          int64_t ao, bo;
          offsets(bi, ao, bo);
          PlainGemm<double>(oa.trans, ob.trans, M, N, K, alpha_, a.data<double>() + ao, oa.ld, b.data<double>() + bo,
                            ob.ld, y.data<double>() + bi * M * N, N);
        }
      });
      return;
    }
    // float, or float16/bfloat16 widened to float once.
    std::vector<float> af, bf, yf;
    const bool wide = a.dtype() != DataType::kFloat;
    if (wide && a.dtype() != DataType::kFloat16 && a.dtype() != DataType::kBFloat16)
      ctx.Fail(StrCat("element type ", DataTypeName(a.dtype()), " is not supported"));
    if (wide) {
      af = ToFloatVector(a);
      bf = ToFloatVector(b);
      yf.resize(static_cast<size_t>(y.size()));
    }
    const float* ad = wide ? af.data() : a.data<float>();
    const float* bd = wide ? bf.data() : b.data<float>();
    float* yd = wide ? yf.data() : y.data<float>();
    // As MatMul: whole products per thread when they share out evenly (attention's heads) or
    // are short; otherwise one after another, each GEMM splitting on the pool.
    linalg_kernels::ForEachProduct(batches, 2.0 * cost, ctx.thread_pool(), M < 64, [&](int64_t bi, ThreadPool* pool) {
      int64_t ao, bo;
      offsets(bi, ao, bo);
      linalg::Sgemm(oa.trans, ob.trans, M, N, K, alpha_, ad + ao, oa.ld, bd + bo, ob.ld, 0.0f, yd + bi * M * N, N, pool);
    });
    if (wide) FromFloat(yf.data(), y);
  }

 private:
  // B is a constant 2-D float matrix packed at creation (its batch is empty, so Y's batch is A's).
  void ComputePackedB(KernelContext& ctx, const Tensor& a) const {
    if (a.dtype() != DataType::kFloat) ctx.Fail("A and B must have the same element type");
    if (a.rank() == 0) ctx.Fail("A and B must have rank >= 1");
    const Operand oa = Describe(a.shape(), trans_a_, trans_batch_a_, false);
    const int64_t M = oa.trans ? oa.cols : oa.rows, K = oa.trans ? oa.rows : oa.cols;
    const int64_t N = bf16_b_ ? bf16_b_->n() : packed_b_->n(), Kb = bf16_b_ ? bf16_b_->k() : packed_b_->k();
    if (K != Kb) ctx.Fail(StrCat("inner dimensions differ: ", K, " vs ", Kb));
    Shape out_shape = oa.batch;
    if (a.rank() > 1) out_shape.push_back(M);
    out_shape.push_back(N);
    Tensor& y = ctx.AllocateOutput(0, DataType::kFloat, out_shape);
    if (y.size() == 0) return;
    const int64_t batches = ShapeSize(oa.batch);
    const float* ad = a.data<float>();
    float* yd = y.data<float>();
    // The SGEMM, or the bf16 GEMM for a bfloat16 model's weight (linalg::kBf16Attribute).
    auto gemm = [&](int64_t rows, const float* ab, float* yb, ThreadPool* pool) {
      if (bf16_b_)
        linalg::Bf16GemmPackedB(oa.trans, rows, N, K, alpha_, ab, oa.ld, *bf16_b_, 0.0f, yb, N, pool);
      else
        linalg::SgemmPackedB(oa.trans, rows, N, K, alpha_, ab, oa.ld, *packed_b_, 0.0f, yb, N, pool);
    };
    if (bf16_b_) NoteKernelVariant("gemm packed bf16 B", linalg::Bf16GemmKernelName());
    // Plain row-major batches are one tall product: the packed weights stream once.
    if (batches == 1 || (!oa.trans && oa.ld == K && oa.batch_unit == M * K)) {
      gemm(batches * M, ad, yd, ctx.thread_pool());
      return;
    }
    const double cost = 2.0 * static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
    linalg_kernels::ForEachProduct(batches, cost, ctx.thread_pool(), false, [&](int64_t bi, ThreadPool* pool) {
      gemm(M, ad + bi * oa.batch_unit, yd + bi * M * N, pool);
    });
  }

  float alpha_;
  bool trans_a_, trans_b_, trans_batch_a_, trans_batch_b_;
  std::shared_ptr<const linalg::PackedB> packed_b_;  // constant B packed once; null: read each run
  std::shared_ptr<const linalg::PackedBf16B> bf16_b_;  // instead of packed_b_ for a bfloat16 model
};

ONYX_REGISTER_KERNEL("CPU", "com.microsoft", "FusedMatMul", 1, kOpsetMax, FusedMatMul);
// The older name ONNX Runtime keeps for backward compatibility.
ONYX_REGISTER_KERNEL("CPU", "com.microsoft", "TransposeMatMul", 1, kOpsetMax, FusedMatMul);

}  // namespace
}  // namespace onyx::contrib
