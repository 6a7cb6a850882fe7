#include "runtime/pass_provenance.h"

#include <cctype>

namespace onyx {

std::string CreatedBy(const ir::Node& node, const OptimizationReport* report) {
  if (report == nullptr) return "unknown (no optimization report)";
  const std::string qualified = (node.domain.empty() ? "" : node.domain + ".") + node.op_type;
  std::string passes;
  for (const PassReport& pass : report->passes) {
    for (const auto& [kind, count] : pass.counts) {
      const bool names_op = kind == node.op_type || kind == qualified || kind.rfind(qualified + " ", 0) == 0 ||
                            kind.rfind(node.op_type + " ", 0) == 0;
      if (names_op && count > 0 && passes.find(pass.name) == std::string::npos)
        passes += (passes.empty() ? "" : ", ") + pass.name;
    }
  }
  const bool in_model =
      report->op_counts_before.count(qualified) != 0 || report->op_counts_before.count(node.op_type) != 0;
  if (!passes.empty()) return "pass " + passes + (in_model ? " (or the model: it has " + node.op_type + " nodes)" : "");
  if (in_model) return "the model (no pass makes " + node.op_type + " here)";
  return "a pass (the optimization report does not name it)";
}

std::string PassesRemoving(const std::string& op_type, const OptimizationReport& report) {
  std::string out;
  for (const PassReport& pass : report.passes) {
    for (const auto& [kind, count] : pass.counts) {
      // Whole-word match: "Conv+BatchNormalization" names BatchNormalization, "folded Shape" Shape.
      size_t at = kind.find(op_type);
      bool found = false;
      while (at != std::string::npos && !found) {
        const bool start_ok = at == 0 || !std::isalnum(static_cast<unsigned char>(kind[at - 1]));
        const size_t end = at + op_type.size();
        const bool end_ok = end == kind.size() || !std::isalnum(static_cast<unsigned char>(kind[end]));
        found = start_ok && end_ok;
        at = kind.find(op_type, at + 1);
      }
      if (found && count > 0) out += (out.empty() ? "" : ", ") + pass.name + " (" + kind + ": " + std::to_string(count) + ")";
    }
  }
  return out;
}

}  // namespace onyx
