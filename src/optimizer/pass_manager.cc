#include "optimizer/pass_manager.h"

#include <algorithm>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>

#include "base/check.h"

namespace onyx {

const char* OptLevelName(OptLevel level) {
  switch (level) {
    case OptLevel::kDisabled: return "disabled";
    case OptLevel::kBasic: return "basic";
    case OptLevel::kExtended: return "extended";
    case OptLevel::kAll: return "all";
  }
  return "?";
}

OptLevel ParseOptLevel(const std::string& text) {
  if (text == "disabled" || text == "ORT_DISABLE_ALL" || text == "0") return OptLevel::kDisabled;
  if (text == "basic" || text == "ORT_ENABLE_BASIC" || text == "1") return OptLevel::kBasic;
  if (text == "extended" || text == "ORT_ENABLE_EXTENDED" || text == "2") return OptLevel::kExtended;
  if (text == "all" || text == "ORT_ENABLE_ALL" || text == "99") return OptLevel::kAll;
  ONYX_THROW(kInvalidArgument, "unknown optimization level '", text, "' (disabled, basic, extended, all)");
}

PassRegistry& PassRegistry::Global() {
  static PassRegistry registry;
  return registry;
}

void PassRegistry::Register(int order, Factory factory) { factories_.emplace_back(order, factory); }

std::vector<std::unique_ptr<Pass>> PassRegistry::Create() const {
  std::vector<std::pair<int, std::unique_ptr<Pass>>> made;
  for (const auto& [order, factory] : factories_) made.emplace_back(order, factory());
  std::stable_sort(made.begin(), made.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second->name() < b.second->name();
  });
  std::vector<std::unique_ptr<Pass>> passes;
  for (auto& [order, pass] : made) passes.push_back(std::move(pass));
  return passes;
}

std::vector<std::pair<std::string, OptLevel>> RegisteredPasses() {
  std::vector<std::pair<std::string, OptLevel>> result;
  for (const auto& p : PassRegistry::Global().Create()) result.emplace_back(p->name(), p->level());
  return result;
}

namespace {

void Count(const ir::Graph& graph, std::map<std::string, int>& counts) {
  for (const auto& node : graph.nodes) {
    ++counts[node->domain.empty() ? node->op_type : node->domain + "." + node->op_type];
    for (const auto& a : node->attributes) {
      if (a.g) Count(*a.g, counts);
      for (const auto& sub : a.graphs) Count(*sub, counts);
    }
  }
}

// Training graphs name values in Gradient's attributes (xs, y, zs): passes cannot see those
// reads, so such graphs are left as they are.
bool HasGradientNode(const ir::Graph& graph) {
  for (const auto& node : graph.nodes)
    if (node->op_type == "Gradient" && node->domain == "ai.onnx.preview.training") return true;
  return false;
}

void CollectGraphs(ir::Graph& graph, std::vector<ir::Graph*>& out) {
  if (HasGradientNode(graph)) return;
  out.push_back(&graph);
  for (auto& node : graph.nodes)
    for (auto& a : node->attributes) {
      if (a.g) CollectGraphs(*a.g, out);
      for (auto& sub : a.graphs) CollectGraphs(*sub, out);
    }
}

bool Suits(const Pass& pass, const OptimizerOptions& options) {
  const auto wanted = pass.providers();
  if (wanted.empty()) return true;
  for (const auto& p : wanted)
    if (std::find(options.providers.begin(), options.providers.end(), p) != options.providers.end()) return true;
  return false;
}

constexpr int kMaxRounds = 16;

// Fused nodes may use domains the model did not import (com.microsoft, com.onyx): import them
// so that the saved model names its operator sets.
void ImportUsedDomains(ir::Model& model) {
  std::vector<ir::Graph*> graphs;
  CollectGraphs(*model.graph, graphs);
  for (ir::Graph* g : graphs)
    for (const auto& node : g->nodes)
      if (!model.opset_imports.count(node->domain)) model.opset_imports[node->domain] = std::max(node->opset, 1);
}

}  // namespace

std::map<std::string, int> CountOps(const ir::Graph& graph) {
  std::map<std::string, int> counts;
  Count(graph, counts);
  return counts;
}

std::map<std::string, int> OptimizationReport::FusedOperatorStatistics() const {
  std::map<std::string, int> stats;
  for (const auto& [op, n] : op_counts_after) {
    const int before = op_counts_before.count(op) ? op_counts_before.at(op) : 0;
    if (n > before) stats[op] = n - before;
  }
  return stats;
}

std::string OptimizationReport::ToString() const {
  std::ostringstream os;
  os << "optimization level: " << OptLevelName(level) << "\n";
  for (const auto& p : passes) {
    if (p.rewrites == 0) continue;
    os << "  " << p.name << ": " << p.rewrites << " rewrite" << (p.rewrites == 1 ? "" : "s");
    if (!p.counts.empty()) {
      os << " (";
      bool first = true;
      for (const auto& [kind, n] : p.counts) {
        os << (first ? "" : ", ") << kind << " " << n;
        first = false;
      }
      os << ")";
    }
    os << "\n";
  }
  // Where the passes' time goes on a large graph: each whole-graph type inference costs a walk of
  // every node, so a count that grows with a pass's rewrites makes it quadratic.
  std::vector<const PassReport*> inferring;
  for (const auto& p : passes)
    if (p.type_inferences > 0) inferring.push_back(&p);
  std::stable_sort(inferring.begin(), inferring.end(),
                   [](const PassReport* a, const PassReport* b) { return a->type_inferences > b->type_inferences; });
  if (!inferring.empty()) {
    os << "whole-graph type inferences:";
    for (size_t i = 0; i < inferring.size(); ++i)
      os << (i == 0 ? " " : ", ") << inferring[i]->name << " " << inferring[i]->type_inferences;
    os << "\n";
  }
  std::set<std::string> ops;
  for (const auto& [op, n] : op_counts_before) ops.insert(op);
  for (const auto& [op, n] : op_counts_after) ops.insert(op);
  os << "nodes by op type (before -> after):\n";
  for (const auto& op : ops) {
    const int b = op_counts_before.count(op) ? op_counts_before.at(op) : 0;
    const int a = op_counts_after.count(op) ? op_counts_after.at(op) : 0;
    os << "  " << op << ": " << b << " -> " << a << "\n";
  }
  return os.str();
}

OptimizationReport OptimizeModel(ir::Model& model, const OptimizerOptions& options) {
  OptimizationReport report;
  report.level = options.level;
  report.op_counts_before = CountOps(*model.graph);
  const auto known = RegisteredPasses();
  for (const auto& name : options.only_passes) {
    const bool exists = std::any_of(known.begin(), known.end(), [&](const auto& p) { return p.first == name; });
    ONYX_CHECK(exists, kInvalidArgument, "unknown optimizer pass '", name, "'");
  }
  for (const auto& name : options.disabled_passes) {
    const bool exists = std::any_of(known.begin(), known.end(), [&](const auto& p) { return p.first == name; });
    ONYX_CHECK(exists, kInvalidArgument, "cannot disable unknown optimizer pass '", name, "'");
  }
  if (options.level == OptLevel::kDisabled) {
    report.op_counts_after = report.op_counts_before;
    return report;
  }
  auto passes = PassRegistry::Global().Create();
  std::vector<Pass*> active;
  for (auto& p : passes) {
    const bool disabled = std::find(options.disabled_passes.begin(), options.disabled_passes.end(), p->name()) !=
                          options.disabled_passes.end();
    const bool chosen = options.only_passes.empty() ||
                        std::find(options.only_passes.begin(), options.only_passes.end(), p->name()) !=
                            options.only_passes.end();
    if (!disabled && chosen && static_cast<int>(p->level()) <= static_cast<int>(options.level) && Suits(*p, options))
      active.push_back(p.get());
  }
  std::map<std::string, size_t> report_index;
  for (Pass* p : active) {
    report_index[p->name()] = report.passes.size();
    report.passes.push_back(PassReport{p->name(), 0, {}});
  }
  ProvenanceTracker provenance;
  // The types of graphs no pass has changed since they were inferred, handed to the next pass's
  // editor: most passes change nothing, and inferring a large graph for each costs as much as
  // the passes themselves. Any change drops them all (a graph's change can reach the types of
  // the subgraphs that read its values).
  std::unordered_map<const ir::Graph*, TypeMap> carried_types;
  for (int round = 0; round < kMaxRounds; ++round) {
    int changed = 0;
    for (Pass* pass : active) {
      std::vector<ir::Graph*> graphs;
      CollectGraphs(*model.graph, graphs);
      // Innermost graphs first: rewriting a parent may delete a subgraph it owns.
      std::reverse(graphs.begin(), graphs.end());
      provenance.Prepare(graphs);
      PassReport& pr = report.passes[report_index[pass->name()]];
      for (ir::Graph* graph : graphs) {
        GraphEditor editor(*graph, model.opset_imports);
        editor.set_fold_overridable(options.fold_overridable_initializers);
        PassContext ctx{editor, options, pr.counts};
        if (auto carried = carried_types.find(graph); carried != carried_types.end()) {
          editor.AdoptTypes(std::move(carried->second));
          carried_types.erase(carried);
        }
        int n = 0;
        try {
          n = pass->Apply(ctx);
          pr.type_inferences += editor.type_inferences();
          const bool edited = n > 0 || editor.modified();
          std::optional<TypeMap> types = edited ? std::nullopt : editor.ReleaseTypes();
          editor.Finish(n > 0);
          if (edited || editor.modified())  // Finish may drop unread initializers
            carried_types.clear();
          else if (types)
            carried_types[graph] = std::move(*types);
          // The rewritten graph with its subgraphs: a pass on one graph changes nothing above it.
          if (n > 0) graph->Validate();
        } catch (const Error& e) {
          throw Error(e.code(), StrCat("optimizer pass '", pass->name(), "' on graph '", graph->name, "': ", e.what()));
        }
        if (n > 0 || provenance.CountChanged(*graph)) provenance.Record(*graph, pass->name(), report.provenance);
        pr.rewrites += n;
        changed += n;
      }
    }
    if (changed == 0) break;
  }
  // Editors that rewrote nothing leave unread initializers (those of the model as loaded) alone.
  std::vector<ir::Graph*> graphs;
  CollectGraphs(*model.graph, graphs);
  for (ir::Graph* graph : graphs) GraphEditor(*graph, model.opset_imports).RemoveUnreadInitializers();
  ImportUsedDomains(model);
  report.op_counts_after = CountOps(*model.graph);
  return report;
}

}  // namespace onyx
