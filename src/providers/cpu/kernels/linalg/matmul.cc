// MatMul (numpy semantics: 1-D operands promoted, batch dims broadcast) for float; the float
// path runs on linalg::Sgemm.
#include "linalg/gemm.h"
#include "ops/broadcast.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

class MatMul final : public OpKernel {
 public:
  explicit MatMul(const KernelInfo&) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    if (a.dtype() != DataType::kFloat || b.dtype() != DataType::kFloat)
      ctx.Fail(StrCat("element types ", DataTypeName(a.dtype()), " x ", DataTypeName(b.dtype()), " are not supported"));
    if (a.rank() == 0 || b.rank() == 0) ctx.Fail("MatMul inputs must have rank >= 1");
    Shape as = a.shape(), bs = b.shape();
    const bool a_vec = as.size() == 1, b_vec = bs.size() == 1;
    if (a_vec) as.insert(as.begin(), 1);
    if (b_vec) bs.push_back(1);
    const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
    if (bs[bs.size() - 2] != k) ctx.Fail(StrCat("inner dimensions differ: ", k, " vs ", bs[bs.size() - 2]));
    const Shape a_batch(as.begin(), as.end() - 2), b_batch(bs.begin(), bs.end() - 2);
    const Shape batch = BroadcastShapes({a_batch, b_batch});
    Shape out_shape = batch;
    if (!a_vec) out_shape.push_back(m);
    if (!b_vec) out_shape.push_back(n);
    Tensor& out = ctx.AllocateOutput(0, DataType::kFloat, out_shape);
    const int64_t batches = ShapeSize(batch);
    const auto a_strides = BroadcastStrides(a_batch, batch);
    const auto b_strides = BroadcastStrides(b_batch, batch);
    for (int64_t bi = 0; bi < batches; ++bi) {
      int64_t a_off = 0, b_off = 0, rem = bi;
      for (size_t d = batch.size(); d-- > 0;) {
        const int64_t idx = rem % batch[d];
        rem /= batch[d];
        a_off += idx * a_strides[d];
        b_off += idx * b_strides[d];
      }
      linalg::Sgemm(false, false, m, n, k, 1.0f, a.data<float>() + a_off * m * k, k, b.data<float>() + b_off * k * n, n,
                    0.0f, out.data<float>() + bi * m * n, n, ctx.thread_pool());
    }
  }
};

ONYX_CPU_KERNEL("MatMul", 1, kOpsetMax, MatMul);

}  // namespace
}  // namespace onyx
