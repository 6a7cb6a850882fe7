// Runs the registered passes up to a level, to a fixed point, over a model's graph and its
// subgraphs, validating after every change; reports what each pass did, and which pass made,
// rewrote or removed each node.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "optimizer/node_provenance.h"
#include "optimizer/pass.h"

namespace onyx {

struct PassReport {
  std::string name;
  int rewrites = 0;
  std::map<std::string, int> counts;  // by kind, e.g. {"FusedConv": 53}
  int type_inferences = 0;            // whole-graph type inferences, all rounds and graphs
};

struct OptimizationReport {
  OptLevel level = OptLevel::kAll;
  std::vector<PassReport> passes;                 // every pass that ran, in order of first run
  std::map<std::string, int> op_counts_before;    // node counts by op type (all graphs)
  std::map<std::string, int> op_counts_after;
  // By node name: the pass that created, rewrote or removed each node a pass touched.
  ProvenanceMap provenance;
  // Nodes created by fusions, by op type (ONNX Runtime's get_fused_operator_statistics).
  std::map<std::string, int> FusedOperatorStatistics() const;
  std::string ToString() const;
};

// Names of every registered pass with its level (for --disable validation and docs).
std::vector<std::pair<std::string, OptLevel>> RegisteredPasses();

OptimizationReport OptimizeModel(ir::Model& model, const OptimizerOptions& options);

// Node counts by op type ("Conv", "com.microsoft.FusedConv"), subgraphs included.
std::map<std::string, int> CountOps(const ir::Graph& graph);

}  // namespace onyx
