// Shape inference over a graph built in a test: the inferred types, and one of them as text.
#pragma once

#include <string>

#include "model_builder.h"
#include "onnx/model_loader.h"
#include "ops/shape_inference.h"

namespace onyx::test {

// The graph as saved and loaded again (as a session sees it), then typed by InferGraphTypes.
inline TypeMap Infer(const ModelBuilder& b) {
  const std::string bytes = b.Bytes();
  auto model = LoadModelFromBytes(bytes.data(), bytes.size());
  return InferGraphTypes(*model->graph);
}

// "tensor(float)[1,16,?,d0]", or "none" when the value got no type.
inline std::string TypeOf(const TypeMap& types, const std::string& name) {
  auto it = types.find(name);
  return it == types.end() || !it->second ? "none" : it->second->ToString();
}

}  // namespace onyx::test
