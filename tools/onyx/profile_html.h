// The HTML report of `onyx profile -o`: one self-contained file (inline CSS, script and SVG, no
// network) with a timeline per thread, sortable tables per op type and per node, and the
// optimized graph with nodes coloured by their share of the time; clicking a node shows its
// attributes, shapes, provider, kernel variant and the pass that created it.
#pragma once

#include <string>

#include "ir/graph.h"
#include "optimizer/pass_manager.h"
#include "profile_summary.h"

namespace onyx::cli {

struct ReportSources {
  std::string trace_path;
  std::string model_path;                          // may be empty
  const ir::Graph* graph = nullptr;                // the optimized graph; null: no graph view
  const OptimizationReport* optimization = nullptr;  // which pass made each node
};

std::string ProfileHtml(const ProfileSummary& summary, const MachinePeak& peak, const ReportSources& sources);

}  // namespace onyx::cli
