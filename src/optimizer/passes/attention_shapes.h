// Shape reasoning for the attention fusions: constants (initializers or Constant nodes), the
// shape tensors exporters compute (Shape/Gather/Unsqueeze/Concat chains) as per-element
// expressions, dims a matched pattern makes equal, and ranks where shape inference stops.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "optimizer/graph_editor.h"

namespace onyx::attention {

// A constant: an initializer no feed can override, or a Constant node's value.
std::optional<Tensor> ConstTensor(GraphEditor& editor, const std::string& value);
// A constant's elements as integers (int32/int64) or as a double (one element, float or int).
std::optional<std::vector<int64_t>> ConstInts(GraphEditor& editor, const std::string& value);
std::optional<double> ConstScalar(GraphEditor& editor, const std::string& value);

// One element of a computed shape, as exporters build them: a constant, dim `axis` of `value`,
// or dim(value, axis) - dim(value2, axis2).
struct DimExpr {
  enum class Kind { kConst, kDim, kDiff };
  Kind kind = Kind::kConst;
  int64_t constant = 0;
  std::string value, value2;
  int64_t axis = 0, axis2 = 0;
};
// The elements of a 0-D or 1-D integer tensor computed from shapes (Shape, Gather, Slice,
// Unsqueeze, Concat, Cast, Sub of those, constants); nullopt for anything else.
std::optional<std::vector<DimExpr>> ShapeExprs(GraphEditor& editor, const std::string& value);

// Dims that a matched pattern makes equal by construction (a Transpose moves them, a checked
// Reshape keeps them, a projection keeps batch and sequence), plus what shape inference proves.
class DimEquivalence {
 public:
  explicit DimEquivalence(GraphEditor& editor) : editor_(editor) {}
  void Link(const std::string& out, int64_t out_axis, const std::string& in, int64_t in_axis);
  bool Equal(const std::string& a, int64_t a_axis, const std::string& b, int64_t b_axis);
  // The dim's size when known, -1 otherwise.
  int64_t StaticSize(const std::string& value, int64_t axis);

 private:
  using DimRef = std::pair<std::string, int64_t>;
  DimRef Root(DimRef d) const;
  const Dim* Inferred(const DimRef& d);

  GraphEditor& editor_;
  std::map<DimRef, DimRef> links_;
};

// Unsqueeze/Squeeze axes: the attribute before opset 13, the constant input from 13.
std::optional<std::vector<int64_t>> UnsqueezeAxes(GraphEditor& editor, const ir::Node& node, size_t input);

// A value's rank: inferred, or followed through ops that keep or set it when inference left it
// open (ViT builds its tokens with Expand + Concat, which inference may not resolve); -1 unknown.
int64_t StructuralRank(GraphEditor& editor, const std::string& value);

}  // namespace onyx::attention
