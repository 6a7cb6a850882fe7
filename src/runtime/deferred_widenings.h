// The session's side of DeferWidening (providers/cpu/kernels/linalg/deferred_half_widening.h):
// HalfBodyToFloat leaves a float16 MatMul / Gemm weight's or Gather table's float values unwritten
// for its kernel to read from the float16 bits; every other reader gets them written first.
#pragma once

#include "ir/graph.h"

namespace onyx {

// Writes the values of the graph's deferred widenings that something other than a kernel reading
// the float16 bits itself (MatMul, Gemm, FusedMatMul, Attention packing input 1; Gather's table)
// may read: another node, a subgraph, a graph output. Before the kernels are made.
void WriteWideningsOtherReadersNeed(ir::Graph& graph);

// Writes the values of every deferred widening still in the graph: before the graph is saved,
// and after the kernels are made (those still there are read at run time).
void WriteAllDeferredWidenings(ir::Graph& graph);

}  // namespace onyx
