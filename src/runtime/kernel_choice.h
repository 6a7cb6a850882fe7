// The kernel variant a CPU node will run, named before it runs (onyx explain): convolutions ask
// linalg's selection rule (ChooseConvAlgorithm / ChooseNchwcAlgorithm, the one the kernels call)
// with what shape inference knows; MatMul and Gemm name the SGEMM path. Where the choice waits
// for a shape known only at run time, the text says so and names the rule.
#pragma once

#include <string>

#include "ir/graph.h"
#include "ops/shape_inference.h"

namespace onyx {

class GraphFacts;

// "" when the op has a single path (nothing to choose). types: InferGraphTypes(graph); facts: one
// per graph, for all its nodes (the whole-graph maps a node's text reads are built once).
std::string KernelChoiceText(const ir::Node& node, const ir::Graph& graph, const TypeMap& types, GraphFacts& facts);

}  // namespace onyx
