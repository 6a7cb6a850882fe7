#include "runtime/partitioner.h"

namespace onyx {

std::string Placement::Explain() const {
  std::vector<std::string> parts;
  for (const auto& [provider_name, reason] : declined) parts.push_back(StrCat(provider_name, ": ", reason));
  std::string why = StrJoin(parts, "; ");
  if (provider == nullptr) return why;
  return why.empty() ? StrCat("on ", provider->name()) : StrCat("on ", provider->name(), " (", why, ")");
}

std::unordered_map<const ir::Node*, Placement> PartitionGraph(
    const ir::Graph& graph, const std::vector<const ExecutionProvider*>& providers_by_priority) {
  std::unordered_map<const ir::Node*, Placement> result;
  std::vector<std::vector<NodeClaim>> claims;
  for (const auto* p : providers_by_priority) claims.push_back(p->GetCapability(graph));
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    Placement placement;
    for (size_t p = 0; p < providers_by_priority.size(); ++p) {
      const NodeClaim& claim = claims[p][n];
      if (claim.claimed) {
        placement.provider = providers_by_priority[p];
        break;
      }
      placement.declined.emplace_back(providers_by_priority[p]->name(), claim.reason);
    }
    result[graph.nodes[n].get()] = std::move(placement);
  }
  return result;
}

}  // namespace onyx
