// com.onyx.FusedMatMul (Onyx's own op, created at level "all" by MatMulEpilogueFusion):
//   Y = activation(A . B + bias + Z)
// A float [..., K] (its leading dims flatten into the rows), B float [K, N], bias [N] and Z of
// Y's shape [..., N] optional; activation "" (none), "Gelu" (erf) or "FastGelu" (tanh form).
// Everything after the product runs in the GEMM epilogue while each tile is in registers or
// L1, instead of in a BiasGelu / SkipLayerNormalization pass over Y.
#include <memory>
#include <string>
#include <vector>

#include "linalg/gemm.h"
#include "providers/cpu/kernels/linalg/packed_weights.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

linalg::GemmEpilogue::Activation ParseActivation(const KernelInfo& info) {
  const std::string name = info.GetStringOr("activation", "");
  if (name.empty()) return linalg::GemmEpilogue::kNone;
  if (name == "Gelu") return linalg::GemmEpilogue::kGeluErf;
  if (name == "FastGelu") return linalg::GemmEpilogue::kGeluTanh;
  info.Fail(StrCat("attribute 'activation' must be \"\", \"Gelu\" or \"FastGelu\", got \"", name, "\""));
}

class FusedMatMul final : public OpKernel {
 public:
  explicit FusedMatMul(const KernelInfo& info)
      : activation_(ParseActivation(info)), packed_b_(linalg_kernels::PackConstantB(info, 1, false)) {}

  bool ReadsConstantInputAtRun(size_t input) const override { return !(input == 1 && packed_b_); }

  void Compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.required_input(0);
    const Tensor* b = packed_b_ ? nullptr : &ctx.required_input(1);
    const Tensor* bias = ctx.input(2);
    const Tensor* z = ctx.input(3);
    for (const Tensor* t : {&a, b, bias, z})
      if (t != nullptr && t->dtype() != DataType::kFloat)
        ctx.Fail(StrCat("element type ", DataTypeName(t->dtype()), " is not supported (float only)"));
    if (b != nullptr && b->rank() != 2) ctx.Fail(StrCat("B must be 2-D, got ", b->Describe()));
    const int64_t k = packed_b_ ? packed_b_->k() : b->dim(0);
    const int64_t n = packed_b_ ? packed_b_->n() : b->dim(1);
    if (a.rank() == 0 || a.dim(a.rank() - 1) != k)
      ctx.Fail(StrCat("inner dimensions differ: A is ", a.Describe(), ", B is float[", k, ",", n, "]"));
    Shape out_shape(a.shape().begin(), a.shape().end() - 1);
    out_shape.push_back(n);
    if (bias != nullptr && (bias->rank() != 1 || bias->dim(0) != n))
      ctx.Fail(StrCat("bias must be 1-D of size ", n, ", got ", bias->Describe()));
    if (z != nullptr && z->shape() != out_shape)
      ctx.Fail(StrCat("Z must have the output's shape ", ShapeToString(out_shape), ", got ", z->Describe()));
    Tensor& y = ctx.AllocateOutput(0, DataType::kFloat, out_shape);
    if (y.size() == 0) return;
    const int64_t rows = y.size() / n;
    linalg::GemmEpilogue ep;
    ep.bias_per_col = bias != nullptr ? bias->data<float>() : nullptr;
    ep.residual = z != nullptr ? z->data<float>() : nullptr;
    ep.ldr = n;
    ep.activation = activation_;
    if (k == 0) {  // an empty sum: the epilogue over zeros (a 1-deep product of zeros)
      const std::vector<float> zero_a(static_cast<size_t>(rows), 0.0f), zero_b(static_cast<size_t>(n), 0.0f);
      linalg::Sgemm(false, false, rows, n, 1, 1.0f, zero_a.data(), 1, zero_b.data(), n, 0.0f, y.data<float>(), n,
                    ctx.thread_pool(), &ep);
      return;
    }
    if (packed_b_)
      linalg::SgemmPackedB(false, rows, n, k, 1.0f, a.data<float>(), k, *packed_b_, 0.0f, y.data<float>(), n,
                           ctx.thread_pool(), &ep);
    else
      linalg::Sgemm(false, false, rows, n, k, 1.0f, a.data<float>(), k, b->data<float>(), n, 0.0f, y.data<float>(), n,
                    ctx.thread_pool(), &ep);
  }

 private:
  linalg::GemmEpilogue::Activation activation_;
  std::shared_ptr<const linalg::PackedB> packed_b_;
};

ONYX_REGISTER_KERNEL("CPU", "com.onyx", "FusedMatMul", 1, kOpsetMax, FusedMatMul);

}  // namespace
}  // namespace onyx
