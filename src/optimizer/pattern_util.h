// Small helpers passes share: reading constant attributes/inputs and checking node shapes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "optimizer/graph_editor.h"

namespace onyx {

// The values of an int32/int64 tensor, or nullopt for other element types.
std::optional<std::vector<int64_t>> IntsOf(const Tensor& t);
// Integer values of a constant int32/int64 input, when it is constant.
std::optional<std::vector<int64_t>> ConstantInts(GraphEditor& editor, const ir::Node& node, size_t input);
// A constant scalar (any numeric type, one element) as double.
std::optional<double> ConstantScalar(GraphEditor& editor, const std::string& value);
// Attribute values with defaults.
int64_t AttrInt(const ir::Node& node, const std::string& name, int64_t fallback);
float AttrFloat(const ir::Node& node, const std::string& name, float fallback);
std::vector<int64_t> AttrInts(const ir::Node& node, const std::string& name);
std::string AttrString(const ir::Node& node, const std::string& name, const std::string& fallback);
// Dims with every size known, or nullopt (also for an unknown rank).
std::optional<Shape> StaticShape(GraphEditor& editor, const std::string& value);
std::optional<Shape> StaticShape(const std::vector<Dim>& dims);
// Whether the node is op_type in the default domain with `num_inputs` inputs at most.
bool IsOp(const ir::Node* node, const char* op_type, const char* domain = "");
// The single consumer of a node's first output, when it has exactly one and is not a graph output.
ir::Node* SoleConsumer(GraphEditor& editor, const std::string& value);

}  // namespace onyx
