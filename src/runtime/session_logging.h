// What a session logs when it is created: at info, a summary with the optimizer's work; at
// verbose (verbosity 0), where each node runs and which kernel; warnings where Onyx falls back
// (a node a preferred provider declined, an option that cannot take effect).
#pragma once

#include <string>

#include "base/logging.h"
#include "onyx/session.h"
#include "optimizer/pass_manager.h"
#include "runtime/graph_plan.h"

namespace onyx {

void LogSessionCreated(const Logger& logger, const std::string& model_label, const SessionOptions& options,
                       const GraphPlan& plan, const OptimizationReport& report);

}  // namespace onyx
