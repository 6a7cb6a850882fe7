// How a batch of independent matrix products (attention's per-head Q K' and P V) shares the
// intra-op threads. A head's product (128x64x128 for BERT at sequence 128) is below the size
// the SGEMM splits inside, so splitting the batch is what uses more than one thread; each
// product still runs the same single-threaded SGEMM, so the results do not depend on the
// thread count (the SGEMM never splits K).
#pragma once

#include <cstdint>

#include "platform/thread_pool.h"

namespace onyx::linalg_kernels {

// Whole products per thread only when they share out evenly enough: 3 products on 2 threads
// would leave one thread idle a third of the time, so those split inside the GEMM instead.
inline bool SplitsBatchAcrossThreads(int64_t batches, ThreadPool* pool) {
  const int64_t threads = pool != nullptr ? pool->num_threads() : 1;
  return threads > 1 && batches >= threads && (batches % threads == 0 || batches >= 4 * threads);
}

// Runs fn(bi, gemm_pool) for every bi in [0, batches): whole products per thread with a null
// gemm_pool when SplitsBatchAcrossThreads (or always_split_batch: many tiny products), else one
// product after another, each free to split on `pool`. flops_per_product feeds the pool's cost
// model, so a batch too small to repay waking a thread stays on the caller.
template <typename Fn>
void ForEachProduct(int64_t batches, double flops_per_product, ThreadPool* pool, bool always_split_batch, Fn&& fn) {
  if (batches > 1 && (always_split_batch || SplitsBatchAcrossThreads(batches, pool))) {
    ThreadPool::For(pool, batches, flops_per_product, [&](int64_t begin, int64_t end) {
      for (int64_t bi = begin; bi < end; ++bi) fn(bi, static_cast<ThreadPool*>(nullptr));
    });
    return;
  }
  for (int64_t bi = 0; bi < batches; ++bi) fn(bi, pool);
}

}  // namespace onyx::linalg_kernels
