// Assigns every node to an execution provider by the user's priority list; CPU takes what the
// others decline. Records why each node went where, for `onyx info` and error texts.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "providers/provider.h"

namespace onyx {

struct Placement {
  const ExecutionProvider* provider = nullptr;          // null: nobody can run the node
  std::vector<std::pair<std::string, std::string>> declined;  // provider name, reason
  std::string Explain() const;
};

// Placements for the nodes of `graph` (not its subgraphs), by node pointer.
std::unordered_map<const ir::Node*, Placement> PartitionGraph(
    const ir::Graph& graph, const std::vector<const ExecutionProvider*>& providers_by_priority);

}  // namespace onyx
