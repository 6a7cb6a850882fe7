// Which pass made, rewrote or removed a node, as text, from what the pass manager recorded
// (OptimizationReport::provenance): exact, not inferred.
#pragma once

#include <string>

#include "ir/node.h"
#include "optimizer/pass_manager.h"

namespace onyx {

// The record for a node name, or null when no pass touched it (report may be null).
const NodeProvenance* FindProvenance(const std::string& name, const OptimizationReport* report);

// "pass ConvActivationFusion", "the model", "the model, rewritten by pass ConvBatchNormFusion",
// "pass LayerNormFusion, rewritten by pass X". report may be null ("unknown ...").
std::string CreatedBy(const ir::Node& node, const OptimizationReport* report);

// "BatchNormalization (removed by pass ConvBatchNormFusion)" for a removed node's record.
std::string RemovedText(const NodeProvenance& p);

}  // namespace onyx
