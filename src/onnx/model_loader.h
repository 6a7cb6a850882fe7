// Reads an ONNX ModelProto into the IR: opset imports, graph, initializers (viewing the file's
// bytes, external data memory-mapped), sparse initializers made dense, model-local functions
// inlined, nodes sorted topologically, and the result validated.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "ir/graph.h"
#include "onnx/model_validation.h"

namespace onyx {

// IR versions this loader accepts.
inline constexpr int64_t kMinIrVersion = 3;
inline constexpr int64_t kMaxIrVersion = 13;

std::shared_ptr<ir::Model> LoadModelFromFile(const std::string& path, const LoadLimits& limits = {});
// The bytes are copied; external data is then not allowed (there is no folder to find it in).
std::shared_ptr<ir::Model> LoadModelFromBytes(const void* data, size_t size, const LoadLimits& limits = {});

}  // namespace onyx
