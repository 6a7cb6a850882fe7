// Model-local functions (FunctionProto) and their expansion into the calling graph.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace onyx {

struct FunctionDef {
  std::string domain;
  std::string name;
  std::string overload;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<ir::Attribute> attribute_defaults;  // attributes with default values
  std::vector<std::string> attribute_names;       // attributes without defaults
  std::vector<std::unique_ptr<ir::Node>> nodes;   // opsets resolved with the function's imports
};

using FunctionTable = std::map<std::string, FunctionDef>;  // key: FunctionKey(domain, name, overload)
std::string FunctionKey(const std::string& domain, const std::string& name, const std::string& overload);

// Replaces every call of a function in `graph` (and its subgraphs) by the function's body,
// renaming the body's values to be unique and substituting attribute references.
void InlineFunctions(ir::Graph& graph, const FunctionTable& functions);

}  // namespace onyx
