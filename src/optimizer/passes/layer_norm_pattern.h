// Pieces LayerNormFusion and SimplifiedLayerNormFusion share: the reduced axes of a
// ReduceMean, the 1/sqrt(var + eps) chain, and the optional scale/bias after normalization.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "optimizer/graph_editor.h"

namespace onyx::fusion {

// The trailing axes a keepdims ReduceMean reduces, as a count k (it reduces the last k dims of
// its input, whose rank must be known); nullopt for anything else.
std::optional<int64_t> TrailingReduceCount(GraphEditor& editor, const ir::Node& reduce_mean);

// var -> Add(eps) -> Sqrt, then the value `d` divided by it: Div(d, sqrt) or
// Mul(d, Reciprocal(sqrt)). Every node's result is read only by the next one.
struct NormalizeMatch {
  double epsilon = 0;
  std::string normalized;  // d / sqrt(var + eps)
  std::vector<ir::Node*> nodes;
};
std::optional<NormalizeMatch> MatchNormalize(GraphEditor& editor, const std::string& var, const std::string& d);

// A tensor that can serve as LayerNormalization's Scale or B for normalized dims `dims`: its
// dims equal them after dropping leading 1s. Returns the value to use (a reshaped copy for a
// constant of another rank), or nullopt.
std::optional<std::string> AffineOperand(GraphEditor& editor, const std::string& value, const std::vector<Dim>& dims,
                                         DataType dtype);

// After the normalized value: Mul(n, scale) then Add(., bias), each optional.
struct AffineMatch {
  std::string scale;
  std::string bias;
  std::string output;
  std::vector<ir::Node*> nodes;
};
AffineMatch MatchAffine(GraphEditor& editor, const std::string& normalized, const std::vector<Dim>& dims,
                        DataType dtype);

// A constant of ones (or zeros) of the normalized dims, for a missing scale (or bias).
std::optional<std::string> FilledOperand(GraphEditor& editor, const std::vector<Dim>& dims, DataType dtype,
                                         double value, const std::string& hint);

}  // namespace onyx::fusion
