// Which pass made a node of the optimized graph. Passes do not stamp the nodes they create, so
// this reads the optimization report: the passes whose rewrite counts name the node's op type.
#pragma once

#include <string>

#include "ir/node.h"
#include "optimizer/pass_manager.h"

namespace onyx {

// "pass AttentionFusion", "the model (...)", or what is unknown; report may be null.
std::string CreatedBy(const ir::Node& node, const OptimizationReport* report);

// Passes whose counts name `op_type` as removed or merged ("Conv+BatchNormalization", "folded
// Shape", "merged Cast"), with their counts; "" when none does.
std::string PassesRemoving(const std::string& op_type, const OptimizationReport& report);

}  // namespace onyx
