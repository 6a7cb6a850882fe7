// A node: an operator applied to named values. Empty input/output names are omitted
// optional values, as in ONNX.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/attribute.h"

namespace onyx::ir {

inline constexpr const char* kOnnxDomain = "";
inline constexpr const char* kMlDomain = "ai.onnx.ml";
inline constexpr const char* kMsDomain = "com.microsoft";
inline constexpr const char* kPreviewTrainingDomain = "ai.onnx.preview.training";

// "ai.onnx" and "" are the same domain; normalize to "".
std::string NormalizeDomain(const std::string& domain);

class Node {
 public:
  std::string name;
  std::string op_type;
  std::string domain;  // normalized: "" for ai.onnx
  int opset = 0;       // the version of `domain` imported where this node lives
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<Attribute> attributes;
  std::string doc_string;
  std::string overload;  // picks among model-local functions of the same name

  const Attribute* FindAttribute(const std::string& attr_name) const;
  Attribute* FindAttribute(const std::string& attr_name);
  bool HasSubgraphs() const;

  // "node 'conv1' (Conv, opset 11)" or "node 'x' (com.microsoft.Attention, opset 1)"
  std::string Describe() const;
};

}  // namespace onyx::ir
