#include "runtime/pass_provenance.h"

namespace onyx {

const NodeProvenance* FindProvenance(const std::string& name, const OptimizationReport* report) {
  if (report == nullptr) return nullptr;
  auto it = report->provenance.find(name);
  return it == report->provenance.end() ? nullptr : &it->second;
}

std::string CreatedBy(const ir::Node& node, const OptimizationReport* report) {
  if (report == nullptr) return "unknown (no optimization report)";
  const NodeProvenance* p = FindProvenance(node.name, report);
  std::string out = p != nullptr && !p->created_by.empty() ? "pass " + p->created_by : "the model";
  if (p != nullptr && !p->rewritten_by.empty()) {
    out += ", rewritten by pass ";
    for (size_t i = 0; i < p->rewritten_by.size(); ++i) out += (i ? ", " : "") + p->rewritten_by[i];
  }
  return out;
}

std::string RemovedText(const NodeProvenance& p) {
  std::string out = p.op + " (removed by pass " + p.removed_by;
  if (!p.rewritten_by.empty()) {
    out += "; rewritten before by pass ";
    for (size_t i = 0; i < p.rewritten_by.size(); ++i) out += (i ? ", " : "") + p.rewritten_by[i];
  }
  return out + ")";
}

}  // namespace onyx
