// Constant float right-hand operands (MatMul/Gemm weights) packed once when the session is
// created, in the layout the SGEMM microkernel reads.
#pragma once

#include <memory>

#include "linalg/gemm.h"
#include "providers/cpu/kernels/linalg/deferred_half_widening.h"
#include "providers/kernel.h"

namespace onyx::linalg_kernels {

// Where the packs of constant input `index` come from: the session's packed-weight store (the
// creation cache) when it has one, else empty (fresh memory).
inline linalg::PackSource PackSourceFor(const KernelInfo& info, size_t index) {
  std::shared_ptr<PackedWeightStore> store = info.packed_weight_store();
  if (!store) return {};
  return [store, prefix = info.PackKey(index, "")](const std::string& form, size_t count,
                                                     const std::function<void(float*)>& fill) {
    PackedWeightStore::Blob blob =
        store->Get(prefix + form, count * sizeof(float), [&](void* p) { fill(static_cast<float*>(p)); });
    return linalg::AlignedFloats(static_cast<const float*>(blob.data), count, std::move(blob.owner));
  };
}

// Where a kernel's packs that no store keeps (int8 packs) take their memory: placed as the
// session's store places its own packs (onyx.memory.packs_on_small_pages), else fresh.
inline linalg::PackMemory PackMemoryFor(const KernelInfo& info) {
  std::shared_ptr<PackedWeightStore> store = info.packed_weight_store();
  if (!store) return {};
  return [store](size_t count) {
    PackedWeightStore::Blob blob = store->Fresh(count * sizeof(float));
    return linalg::AlignedFloats(static_cast<const float*>(blob.data), count, std::move(blob.owner));
  };
}

// A packed copy of constant input `index` when it is a 2-D float tensor; null otherwise.
// trans_b: the constant is stored as [N, K] (Gemm's transB).
inline std::shared_ptr<const linalg::PackedB> PackConstantB(const KernelInfo& info, size_t index, bool trans_b) {
  const Tensor* b = info.ConstantInput(index);
  if (b == nullptr || b->dtype() != DataType::kFloat || b->rank() != 2 || b->size() == 0) return nullptr;
  const int64_t k = trans_b ? b->dim(1) : b->dim(0);
  const int64_t n = trans_b ? b->dim(0) : b->dim(1);
  const linalg::PackSource source = PackSourceFor(info, index);
  // A float16 weight's float stand-in (HalfBodyToFloat) not written yet: packed from its float16
  // bits, the same pack without the float copy.
  const Tensor half = DeferredHalfSource(*b);
  if (half.defined())
    return std::make_shared<const linalg::PackedB>(trans_b, k, n, static_cast<const uint16_t*>(half.raw_data()),
                                                   b->dim(1), info.thread_pool(), &source);
  return std::make_shared<const linalg::PackedB>(trans_b, k, n, b->data<float>(), b->dim(1), info.thread_pool(),
                                                 &source);
}

}  // namespace onyx::linalg_kernels
