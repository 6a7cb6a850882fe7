// A model with independent branches, for the tests of the parallel executor and of what it
// records: y1 = Relu(x) * -x and y2 = (x + w) - Relu(x), three independent nodes at the first level.
#pragma once

#include <string>

#include "model_builder.h"

namespace onyx::test {

inline std::string BranchyModel() {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {-1, 3});
  b.Output("y1", DataType::kFloat, {-1, 3}).Output("y2", DataType::kFloat, {-1, 3});
  b.Initializer("w", test::FloatTensor({3}, 0.5f, 1.0f));
  b.Node("Relu", {"x"}, {"a"});
  b.Node("Neg", {"x"}, {"n"});
  b.Node("Add", {"x", "w"}, {"d"});
  b.Node("Mul", {"a", "n"}, {"y1"});
  b.Node("Sub", {"d", "a"}, {"y2"});
  return b.Bytes();
}

}  // namespace onyx::test
