#include <algorithm>

#include "explain.h"
#include "optimizer/pass.h"
#include "providers/provider.h"
#include "profile_summary.h"

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

}  // namespace

Explanation ExplainModel(const std::string& model, const std::vector<std::string>& providers, const std::string& level) {
  SessionOptions options;
  options.graph_optimization_level = static_cast<GraphOptimizationLevel>(static_cast<int>(ParseOptLevel(level)));
  options.execution_providers.clear();
  const std::vector<std::string> available = AvailableProviders();
  std::vector<std::string> asked;
  std::vector<std::pair<std::string, std::string>> missing;  // provider, why
  std::vector<std::string> no_device;                         // notes on providers without their device
  for (const std::string& p : providers) {
    const std::string name = ShortProviderName(p);
    asked.push_back(name);
    if (std::find(available.begin(), available.end(), OrtProviderName(name)) != available.end()) {
      options.execution_providers.push_back(name);
      if (const std::string why = ProviderUnavailableReason(name); !why.empty()) {
        // No device: place the nodes as a session with one would (the capability needs no device).
        options.placement_only = true;
        no_device.push_back(name + ": no " + name + " device on this machine (" + why +
                            "); nodes are placed as they would be with one, and a session here would fall back to "
                            "CPU (Python) or fail to be created (C++)");
      }
    } else {
      missing.emplace_back(name, name == "CUDA" ? "not in this build of Onyx (built without the CUDA toolkit)"
                                                : "no such provider in this build of Onyx");
    }
  }
  if (options.execution_providers.empty()) options.execution_providers = {"CPU"};
  Session session(model, options);
  Explanation e = Explain(session);
  e.providers = asked;
  for (const auto& note : no_device) e.notes.push_back(note);
  for (const auto& [name, why] : missing) e.notes.push_back(name + ": " + why + "; its decisions below are CPU's");
  for (auto& n : e.nodes) n.declined.insert(n.declined.begin(), missing.begin(), missing.end());
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
             ", \"created_by\": " + JsonString(n.created_by) + ", \"rewritten_by\": " + strings(n.rewritten_by) +
             ", \"kernel\": " + JsonString(n.kernel) + "}";
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
