// Patterns left in an optimized graph that look fusable, with the condition that kept each from
// fusing, as the fusion passes (optimizer/passes/conv_bn_fusion.cc, attention_pattern.cc) test
// it. Read-only: the passes stay the authority; this names why they passed a pattern by.
#pragma once

#include <vector>

#include "onyx/explain.h"
#include "ir/graph.h"
#include "optimizer/pass.h"

namespace onyx {

std::vector<FusionMiss> FindFusionMisses(const ir::Graph& graph, OptLevel level);

}  // namespace onyx
