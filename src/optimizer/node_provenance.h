// Which pass created, rewrote in place or removed each node, recorded by the pass manager (for
// `onyx explain` and the profile report). It keeps each graph's nodes with a signature of their
// op, operands and attributes, and diffs them after every pass application that rewrote
// something: session creation pays one walk of the graph per such application, Run nothing.
// A node is known by its address: the nodes a pass application makes are allocated while the
// ones it removes still exist (GraphEditor frees them when the pass finishes), so a new node
// never takes a removed one's address within an application.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"

namespace onyx {

struct NodeProvenance {
  std::string op;                         // its op type ("domain.op" outside ai.onnx) when last seen
  std::string created_by;                 // the pass that added it; "" for the model's own nodes
  std::vector<std::string> rewritten_by;  // passes that changed it in place, in order
  std::string removed_by;                 // the pass that removed it; "" while it is in the graph
};

// Keyed by node name (nodes of subgraphs too); nodes no pass touched are absent.
using ProvenanceMap = std::map<std::string, NodeProvenance>;

class ProvenanceTracker {
 public:
  // Drops what is held for graphs not in `live` (deleted subgraphs), then makes sure each graph
  // of `live` has its snapshot. Called before a pass runs over them.
  void Prepare(const std::vector<ir::Graph*>& live);
  // After `pass` was applied to `graph`: records what it created, rewrote and removed there and
  // takes a new snapshot. Cheap to call when nothing changed is not guaranteed: call it only
  // when the pass reported rewrites or the node count moved.
  void Record(const ir::Graph& graph, const std::string& pass, ProvenanceMap& out);
  // Whether `graph`'s node count differs from its snapshot's.
  bool CountChanged(const ir::Graph& graph) const;

 private:
  struct Stamp {
    std::string name, op;
    uint64_t signature = 0;
  };
  using Snapshot = std::unordered_map<const ir::Node*, Stamp>;
  static Snapshot Take(const ir::Graph& graph);
  std::unordered_map<const ir::Graph*, Snapshot> snapshots_;
};

}  // namespace onyx
