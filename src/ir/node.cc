#include "ir/node.h"

#include "base/str_cat.h"
#include "ir/graph.h"

namespace onyx::ir {

std::string NormalizeDomain(const std::string& domain) { return domain == "ai.onnx" ? std::string() : domain; }

const Attribute* Node::FindAttribute(const std::string& attr_name) const {
  for (const auto& a : attributes)
    if (a.name == attr_name) return &a;
  return nullptr;
}

Attribute* Node::FindAttribute(const std::string& attr_name) {
  for (auto& a : attributes)
    if (a.name == attr_name) return &a;
  return nullptr;
}

bool Node::HasSubgraphs() const {
  for (const auto& a : attributes)
    if (a.g || !a.graphs.empty()) return true;
  return false;
}

std::string Node::Describe() const {
  const std::string op = domain.empty() ? op_type : StrCat(domain, ".", op_type);
  return StrCat("node '", name, "' (", op, ", opset ", opset, ")");
}

}  // namespace onyx::ir
