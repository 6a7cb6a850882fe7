// The shape both GELU forms share, matched algebraically so that exporter variants (operand
// order, association of the products, x*x*x or Pow(x, 3), Div by sqrt(2) or Mul by 1/sqrt(2),
// constants folded together) all match:
//   y = 0.5 * x * (1 + f(p(x)))
// where f is Erf or Tanh and p is a polynomial in x made of Add/Sub/Mul/Div/Pow nodes.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "optimizer/graph_editor.h"

namespace onyx::fusion {

struct GeluMatch {
  std::string x;                 // the GELU input
  std::string output;            // the pattern's result
  std::array<double, 4> poly;    // f's argument as c0 + c1 x + c2 x^2 + c3 x^3
  std::vector<ir::Node*> nodes;  // every node of the pattern
};

// Matches the pattern around `f_node` (an Erf or Tanh). Every intermediate value must be read
// only inside the pattern; x may be read elsewhere.
std::optional<GeluMatch> MatchGelu(GraphEditor& editor, ir::Node* f_node);

}  // namespace onyx::fusion
