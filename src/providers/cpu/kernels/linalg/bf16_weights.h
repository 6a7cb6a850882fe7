// Constant weights of a bfloat16 model's products packed for the bf16 GEMM (linalg/bf16_gemm.h):
// HalfBodyToFloat marks the node with linalg::kBf16Attribute = 1; the kernel then packs its
// constant 2-D float weight (widened from bfloat16, so exact) into bfloat16 pairs instead of
// the SGEMM's layout, where the CPU has AVX-512 BF16. Elsewhere the mark is ignored.
#pragma once

#include <memory>

#include "linalg/bf16_gemm.h"
#include "providers/cpu/kernels/linalg/deferred_half_widening.h"
#include "providers/kernel.h"

namespace onyx::linalg_kernels {

// Whether the node asks for bfloat16 products and this CPU runs them, with constant input
// `index` a 2-D float tensor. A mark other than 0 or 1 is an error naming it.
inline bool WantsBf16B(const KernelInfo& info, size_t index) {
  const int64_t mark = info.GetIntOr(linalg::kBf16Attribute, 0);
  if (mark != 0 && mark != 1) info.Fail(StrCat("attribute ", linalg::kBf16Attribute, " must be 0 or 1, not ", mark));
  if (mark == 0 || !linalg::Bf16GemmAvailable()) return false;
  const Tensor* b = info.ConstantInput(index);
  return b != nullptr && b->dtype() == DataType::kFloat && b->rank() == 2 && b->size() > 0;
}

// The bfloat16 pack of constant input `index` when WantsBf16B; null otherwise. trans_b: the
// constant is stored [N, K].
inline std::shared_ptr<const linalg::PackedBf16B> PackConstantBf16B(const KernelInfo& info, size_t index,
                                                                     bool trans_b) {
  if (!WantsBf16B(info, index)) return nullptr;
  const Tensor* b = info.ConstantInput(index);
  MaterializeDeferredWidening(*b);  // a float16 weight's values, should a float16 node carry the mark
  const int64_t k = trans_b ? b->dim(1) : b->dim(0);
  const int64_t n = trans_b ? b->dim(0) : b->dim(1);
  return std::make_shared<const linalg::PackedBf16B>(trans_b, k, n, b->data<float>(), b->dim(1));
}

}  // namespace onyx::linalg_kernels
