#include "explain.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "fusion_checks.h"
#include "linalg/conv.h"
#include "linalg/gemm.h"
#include "onnx/model_loader.h"
#include "optimizer/pass.h"
#include "pass_provenance.h"
#include "profile_summary.h"
#include "runtime/partitioner.h"
#include "runtime/session_impl.h"

namespace onyx::cli {
namespace {

// "cuda", "CUDA", "CUDAExecutionProvider" -> "CUDA".
std::string ShortProviderName(std::string name) {
  const std::string suffix = "ExecutionProvider";
  if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
    name.resize(name.size() - suffix.size());
  std::string upper = name;
  std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
  return upper == "CPU" || upper == "CUDA" ? upper : name;
}

// What is known of the kernel variant without running it.
std::string KernelText(const ir::Node& node) {
  static const std::set<std::string> gemm_ops = {"MatMul", "FusedMatMul", "Gemm", "Attention", "MultiHeadAttention"};
  if (gemm_ops.count(node.op_type)) return "GEMM microkernel " + linalg::SgemmKernelName();
  if (node.op_type == "NchwcConv") return "direct NCHWc convolution, " + linalg::ConvIsa();
  if (node.op_type == "Conv" || node.op_type == "FusedConv") {
    return "convolution on " + linalg::ConvIsa() +
           "; the kernel picks Winograd, direct NCHWc, GEMM or depthwise from the input shape when it runs "
           "and does not report which";
  }
  return "";
}

// The original nodes that computed `node`'s outputs from its inputs.
std::vector<std::string> Replaced(const ir::Node& node, const ir::Graph& original,
                                  const std::unordered_map<std::string, ir::Node*>& producers) {
  std::unordered_set<std::string> stop(node.inputs.begin(), node.inputs.end());
  std::vector<std::string> todo(node.outputs.begin(), node.outputs.end());
  std::unordered_set<const ir::Node*> seen;
  std::vector<std::string> names;
  while (!todo.empty() && seen.size() < 4096) {
    const std::string v = todo.back();
    todo.pop_back();
    if (v.empty() || stop.count(v)) continue;
    auto it = producers.find(v);
    if (it == producers.end() || !seen.insert(it->second).second) continue;
    names.push_back(it->second->name);
    for (const auto& in : it->second->inputs)
      if (!original.IsInitializer(in)) todo.push_back(in);
  }
  std::reverse(names.begin(), names.end());
  return names;
}

}  // namespace

Explanation ExplainModel(const std::string& model, const std::vector<std::string>& providers, const std::string& level) {
  Explanation e;
  e.model = model;
  e.level = level;
  SessionOptions options;
  options.graph_optimization_level = static_cast<GraphOptimizationLevel>(static_cast<int>(ParseOptLevel(level)));
  options.execution_providers.clear();
  const std::vector<std::string> available = AvailableProviders();
  std::vector<std::pair<std::string, std::string>> missing;  // provider, why
  for (const std::string& asked : providers) {
    const std::string name = ShortProviderName(asked);
    e.providers.push_back(name);
    if (std::find(available.begin(), available.end(), name + "ExecutionProvider") != available.end()) {
      options.execution_providers.push_back(name);
    } else {
      const std::string why = name == "CUDA" ? "not in this build of Onyx (there is no CUDA provider yet: issue 16)"
                                             : "no such provider in this build of Onyx";
      missing.emplace_back(name, why);
      e.notes.push_back(name + ": " + why + "; its decisions below are CPU's");
    }
  }
  if (options.execution_providers.empty()) options.execution_providers = {"CPU"};
  Session session(model, options);
  const SessionImpl& impl = session.impl();
  const ir::Graph& graph = *impl.model().graph;
  const std::shared_ptr<ir::Model> original_model = LoadModelFromFile(model);
  const ir::Graph& original = *original_model->graph;
  const auto original_producers = original.Producers();
  std::unordered_map<std::string, const ir::Node*> original_by_name;
  for (const auto& n : original.nodes) original_by_name[n->name] = n.get();
  std::unordered_set<std::string> accounted;
  const OptimizationReport& report = impl.optimization_report();
  for (const auto& node : graph.nodes) {
    NodeExplanation n;
    n.name = node->name;
    n.op = node->op_type;
    n.domain = node->domain;
    n.declined = missing;
    if (const Placement* p = impl.plan().PlacementOf(node.get())) {
      if (p->provider != nullptr) n.provider = p->provider->name();
      for (const auto& d : p->declined) n.declined.push_back(d);
    }
    auto same = original_by_name.find(node->name);
    const bool unchanged = same != original_by_name.end() && same->second->op_type == node->op_type &&
                           same->second->domain == node->domain;
    if (unchanged) {
      n.created_by = "the model";
      if (same->second->inputs != node->inputs) {
        // Kept its name but not its operands (a fold such as Conv+BatchNormalization rewrote it).
        std::string inputs;
        for (const auto& in : node->inputs) inputs += (inputs.empty() ? "" : ", ") + in;
        n.created_by = "the model, rewritten by a pass (its inputs are now " + inputs + ")";
      }
      accounted.insert(node->name);
    } else {
      n.replaces = Replaced(*node, original, original_producers);
      for (const auto& r : n.replaces) accounted.insert(r);
      n.created_by = CreatedBy(*node, &report);
    }
    n.kernel = KernelText(*node);
    e.nodes.push_back(std::move(n));
  }
  for (const auto& n : original.nodes) {
    if (accounted.count(n->name)) continue;
    const std::string passes = PassesRemoving(n->op_type, report);
    e.removed.emplace_back(n->name, n->op_type + (passes.empty() ? " (folded or eliminated)" : " (by " + passes + ")"));
  }
  e.fusion_misses = FindFusionMisses(graph, static_cast<OptLevel>(static_cast<int>(options.graph_optimization_level)));
  return e;
}

std::string ExplanationText(const Explanation& e) {
  std::string out = "model: " + e.model + "\nlevel: " + e.level + "\nproviders:";
  for (const auto& p : e.providers) out += " " + p;
  out += "\n";
  for (const auto& note : e.notes) out += "note: " + note + "\n";
  out += "\nnodes of the optimized graph (" + std::to_string(e.nodes.size()) + "):\n";
  for (const auto& n : e.nodes) {
    out += "  " + n.name + " (" + (n.domain.empty() ? "" : n.domain + ".") + n.op + ") on " +
           (n.provider.empty() ? "no provider" : n.provider) + "\n";
    for (const auto& [provider, why] : n.declined) out += "    declined by " + provider + ": " + why + "\n";
    if (!n.replaces.empty()) {
      out += "    replaces:";
      for (const auto& r : n.replaces) out += " " + r;
      out += "\n";
    }
    out += "    created by: " + n.created_by + "\n";
    if (!n.kernel.empty()) out += "    kernel: " + n.kernel + "\n";
  }
  if (!e.removed.empty()) {
    out += "\nremoved from the model (" + std::to_string(e.removed.size()) + "):\n";
    for (const auto& [name, why] : e.removed) out += "  " + name + ": " + why + "\n";
  }
  out += "\nnot fused (" + std::to_string(e.fusion_misses.size()) + "):\n";
  for (const auto& m : e.fusion_misses) {
    out += "  " + m.pattern + " at";
    for (const auto& n : m.nodes) out += " " + n;
    out += ": " + m.reason + "\n";
  }
  return out;
}

std::string ExplanationJson(const Explanation& e) {
  auto strings = [](const std::vector<std::string>& v) {
    std::string out = "[";
    for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + JsonString(v[i]);
    return out + "]";
  };
  std::string nodes = "[";
  for (size_t i = 0; i < e.nodes.size(); ++i) {
    const auto& n = e.nodes[i];
    std::string declined = "{";
    for (size_t k = 0; k < n.declined.size(); ++k)
      declined += (k ? ", " : "") + JsonString(n.declined[k].first) + ": " + JsonString(n.declined[k].second);
    nodes += (i ? ",\n  " : "\n  ") + std::string("{\"name\": ") + JsonString(n.name) + ", \"op\": " + JsonString(n.op) +
             ", \"domain\": " + JsonString(n.domain) + ", \"provider\": " + JsonString(n.provider) +
             ", \"declined\": " + declined + "}, \"replaces\": " + strings(n.replaces) +
             ", \"created_by\": " + JsonString(n.created_by) + ", \"kernel\": " + JsonString(n.kernel) + "}";
  }
  nodes += "]";
  std::string removed = "{";
  for (size_t i = 0; i < e.removed.size(); ++i)
    removed += (i ? ", " : "") + JsonString(e.removed[i].first) + ": " + JsonString(e.removed[i].second);
  removed += "}";
  std::string misses = "[";
  for (size_t i = 0; i < e.fusion_misses.size(); ++i) {
    const auto& m = e.fusion_misses[i];
    misses += (i ? ", " : "") + std::string("{\"pattern\": ") + JsonString(m.pattern) + ", \"nodes\": " +
              strings(m.nodes) + ", \"reason\": " + JsonString(m.reason) + "}";
  }
  misses += "]";
  return "{\"model\": " + JsonString(e.model) + ", \"level\": " + JsonString(e.level) + ", \"providers\": " +
         strings(e.providers) + ", \"notes\": " + strings(e.notes) + ", \"nodes\": " + nodes + ", \"removed\": " +
         removed + ", \"fusion_misses\": " + misses + "}";
}

}  // namespace onyx::cli
