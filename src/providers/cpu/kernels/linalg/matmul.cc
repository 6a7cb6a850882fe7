// MatMul (numpy semantics: 1-D operands promoted, batch dims broadcast) for float, double,
// float16, bfloat16 and 32/64-bit integers (opsets 1, 9, 13). The float path runs on
// linalg::Sgemm.
#include "ops/broadcast.h"
#include "providers/cpu/kernels/linalg/batched_gemm.h"
#include "providers/cpu/kernels/linalg/bf16_weights.h"
#include "providers/cpu/kernels/linalg/packed_weights.h"
#include "providers/cpu/kernels/linalg/typed_gemm.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

class MatMul final : public OpKernel {
 public:
  explicit MatMul(const KernelInfo& info)
      : packed_b_(linalg_kernels::WantsBf16B(info, 1) ? nullptr : linalg_kernels::PackConstantB(info, 1, false)),
        bf16_b_(linalg_kernels::PackConstantBf16B(info, 1, false)),
        microkernel_(linalg::SgemmKernelName()),
        isa_(linalg::SgemmIsa()) {}

  bool ReadsConstantInputAtRun(size_t input) const override { return !(input == 1 && (packed_b_ || bf16_b_)); }

  void Compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.required_input(0);
    if (packed_b_) return ComputeWithPackedB(ctx, a);
    if (bf16_b_) return ComputeBf16(ctx, a);
    const Tensor& b = ctx.required_input(1);
    if (a.dtype() != b.dtype())
      ctx.Fail(
          StrCat("inputs have different element types ", DataTypeName(a.dtype()), " and ", DataTypeName(b.dtype())));
    if (a.rank() == 0 || b.rank() == 0) ctx.Fail("MatMul inputs must have rank >= 1");
    Shape as = a.shape(), bs = b.shape();
    const bool a_vec = as.size() == 1, b_vec = bs.size() == 1;
    if (a_vec) as.insert(as.begin(), 1);
    if (b_vec) bs.push_back(1);
    const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
    if (bs[bs.size() - 2] != k) ctx.Fail(StrCat("inner dimensions differ: ", k, " vs ", bs[bs.size() - 2]));
    const Shape a_batch(as.begin(), as.end() - 2), b_batch(bs.begin(), bs.end() - 2);
    Shape batch;
    try {
      batch = BroadcastShapes({a_batch, b_batch});
    } catch (const Error& e) {
      ctx.Fail(StrCat("batch dimensions do not broadcast: ", e.what()));
    }
    Shape out_shape = batch;
    if (!a_vec) out_shape.push_back(m);
    if (!b_vec) out_shape.push_back(n);
    Tensor& out = ctx.AllocateOutput(0, a.dtype(), out_shape);
    if (out.size() == 0) return;
    const int64_t batches = ShapeSize(batch);
    const auto a_strides = BroadcastStrides(a_batch, batch);
    const auto b_strides = BroadcastStrides(b_batch, batch);
    Dispatch(linalg_kernels::GemmTypes{}, a.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const KernelVariant v = linalg_kernels::TypedGemmVariant<T>(false, n, k, microkernel_, isa_);
      NoteKernelVariant(v.algorithm, v.isa);
      const T* pa = a.data<T>();
      const T* pb = b.data<T>();
      T* po = out.data<T>();
      auto one = [&](int64_t bi, ThreadPool* pool) {
        int64_t a_off = 0, b_off = 0, rem = bi;
        for (size_t d = batch.size(); d-- > 0;) {
          const int64_t idx = rem % batch[d];
          rem /= batch[d];
          a_off += idx * a_strides[d];
          b_off += idx * b_strides[d];
        }
        T* c = po + bi * m * n;
        if (k == 0) {  // an empty sum
          std::fill(c, c + m * n, T(0.0f));
          return;
        }
        linalg_kernels::TypedGemm<T>(false, false, m, n, k, 1.0f, pa + a_off * m * k, k, pb + b_off * k * n, n, 0.0f, c,
                                     n, pool);
      };
      // Products that share out evenly (attention's heads), or many short ones: whole products
      // per thread; otherwise one after another, the GEMM splitting its rows.
      const double cost = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) * 2.0;
      linalg_kernels::ForEachProduct(batches, cost, ctx.thread_pool(), m < 64, one);
    });
  }

 private:
  // A [..., K] float times a constant [K, N]: checks A and makes the output [..., N] (a 1-D A is a
  // row vector whose extra dim is dropped again, as numpy does); null when the output is empty.
  static Tensor* PackedProductOutput(KernelContext& ctx, const Tensor& a, int64_t k, int64_t n) {
    if (a.dtype() != DataType::kFloat) ctx.Fail(StrCat("A is ", DataTypeName(a.dtype()), " but B is float"));
    if (a.rank() == 0 || a.dim(a.rank() - 1) != k)
      ctx.Fail(StrCat("inner dimensions differ: A is ", a.Describe(), ", B is float[", k, ",", n, "]"));
    Shape out_shape(a.shape().begin(), a.shape().end() - 1);
    out_shape.push_back(n);
    Tensor& out = ctx.AllocateOutput(0, DataType::kFloat, out_shape);
    return out.size() == 0 ? nullptr : &out;
  }

  // B is a constant [K, N] matrix shared by every batch: all rows of A go through one packed
  // GEMM (A's batch dims flatten into M).
  void ComputeWithPackedB(KernelContext& ctx, const Tensor& a) const {
    const int64_t k = packed_b_->k(), n = packed_b_->n();
    Tensor* out = PackedProductOutput(ctx, a, k, n);
    if (out == nullptr) return;
    NoteKernelVariant("gemm packed B", packed_b_->kernel_name());
    linalg::SgemmPackedB(false, a.size() / k, n, k, 1.0f, a.data<float>(), k, *packed_b_, 0.0f, out->data<float>(), n,
                         ctx.thread_pool());
  }

  // A bfloat16 model's constant B (linalg::kBf16Attribute): the bf16 GEMM, as the packed path.
  void ComputeBf16(KernelContext& ctx, const Tensor& a) const {
    const int64_t k = bf16_b_->k(), n = bf16_b_->n();
    Tensor* out = PackedProductOutput(ctx, a, k, n);
    if (out == nullptr) return;
    NoteKernelVariant("gemm packed bf16 B", linalg::Bf16GemmKernelName());
    linalg::Bf16GemmPackedB(false, a.size() / k, n, k, 1.0f, a.data<float>(), k, *bf16_b_, 0.0f, out->data<float>(), n,
                            ctx.thread_pool());
  }

  std::shared_ptr<const linalg::PackedB> packed_b_;
  std::shared_ptr<const linalg::PackedBf16B> bf16_b_;  // instead of packed_b_ for a bfloat16 model
  std::string microkernel_, isa_;  // the SGEMM's when the kernel was made, for the profile
};

ONYX_CPU_KERNEL("MatMul", 1, 8, MatMul);
ONYX_CPU_KERNEL("MatMul", 9, 12, MatMul);
ONYX_CPU_KERNEL("MatMul", 13, kOpsetMax, MatMul);

}  // namespace
}  // namespace onyx
