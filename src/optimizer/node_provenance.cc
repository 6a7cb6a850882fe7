#include "optimizer/node_provenance.h"

#include <functional>
#include <unordered_set>

namespace onyx {
namespace {

void Mix(uint64_t& h, uint64_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); }
void MixString(uint64_t& h, const std::string& s) { Mix(h, std::hash<std::string>{}(s)); }

// What a pass can change in place: op, operands and attributes (tensors and subgraphs by
// identity and size, not by content).
uint64_t Signature(const ir::Node& n) {
  uint64_t h = 0;
  MixString(h, n.domain);
  MixString(h, n.op_type);
  Mix(h, n.inputs.size());
  for (const auto& v : n.inputs) MixString(h, v);
  Mix(h, n.outputs.size());
  for (const auto& v : n.outputs) MixString(h, v);
  Mix(h, n.attributes.size());
  for (const auto& a : n.attributes) {
    MixString(h, a.name);
    Mix(h, static_cast<uint64_t>(a.type));
    Mix(h, static_cast<uint64_t>(a.i));
    Mix(h, std::hash<float>{}(a.f));
    MixString(h, a.s);
    for (int64_t v : a.ints) Mix(h, static_cast<uint64_t>(v));
    for (float v : a.floats) Mix(h, std::hash<float>{}(v));
    for (const auto& v : a.strings) MixString(h, v);
    Mix(h, reinterpret_cast<uintptr_t>(a.t.defined() ? a.t.raw_data() : nullptr));
    Mix(h, reinterpret_cast<uintptr_t>(a.g.get()));
    Mix(h, a.tensors.size() + (a.graphs.size() << 20));
  }
  return h;
}

std::string QualifiedOp(const ir::Node& n) { return n.domain.empty() ? n.op_type : n.domain + "." + n.op_type; }

}  // namespace

ProvenanceTracker::Snapshot ProvenanceTracker::Take(const ir::Graph& graph) {
  Snapshot s;
  s.reserve(graph.nodes.size());
  for (const auto& n : graph.nodes) s.emplace(n.get(), Stamp{n->name, QualifiedOp(*n), Signature(*n)});
  return s;
}

void ProvenanceTracker::Prepare(const std::vector<ir::Graph*>& live) {
  std::unordered_set<const ir::Graph*> keep(live.begin(), live.end());
  for (auto it = snapshots_.begin(); it != snapshots_.end();) it = keep.count(it->first) ? std::next(it) : snapshots_.erase(it);
  for (const ir::Graph* g : live)
    if (!snapshots_.count(g)) snapshots_.emplace(g, Take(*g));
}

bool ProvenanceTracker::CountChanged(const ir::Graph& graph) const {
  auto it = snapshots_.find(&graph);
  return it == snapshots_.end() || it->second.size() != graph.nodes.size();
}

void ProvenanceTracker::Record(const ir::Graph& graph, const std::string& pass, ProvenanceMap& out) {
  Snapshot now = Take(graph);
  Snapshot& before = snapshots_[&graph];
  // Removals first: a node the pass made may take the name of one it removed.
  for (const auto& [node, stamp] : before) {
    if (now.count(node) || stamp.name.empty()) continue;
    NodeProvenance& p = out[stamp.name];
    p.op = stamp.op;
    p.removed_by = pass;
  }
  for (const auto& n : graph.nodes) {
    const Stamp& stamp = now.at(n.get());
    if (stamp.name.empty()) continue;
    auto old = before.find(n.get());
    if (old == before.end()) {
      out[stamp.name] = NodeProvenance{stamp.op, pass, {}, ""};
    } else if (old->second.signature != stamp.signature) {
      NodeProvenance& p = out[stamp.name];
      p.op = stamp.op;
      if (p.rewritten_by.empty() || p.rewritten_by.back() != pass) p.rewritten_by.push_back(pass);
    }
  }
  before = std::move(now);
}

}  // namespace onyx
