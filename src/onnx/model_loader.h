// Reads an ONNX ModelProto into the IR: opset imports, graph, initializers (viewing the file's
// bytes, external data memory-mapped), sparse initializers made dense, model-local functions
// inlined, nodes sorted topologically, and the result validated.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "onnx/model_validation.h"
#include "platform/mapped_file.h"

namespace onyx {

// IR versions this loader accepts.
inline constexpr int64_t kMinIrVersion = 3;
inline constexpr int64_t kMaxIrVersion = 13;

std::shared_ptr<ir::Model> LoadModelFromFile(const std::string& path, const LoadLimits& limits = {});
// The bytes are copied; external data is then not allowed (there is no folder to find it in).
std::shared_ptr<ir::Model> LoadModelFromBytes(const void* data, size_t size, const LoadLimits& limits = {});

// For the session's creation cache: as LoadModelFromFile, also listing the full paths of the
// external data files the model reads.
std::shared_ptr<ir::Model> LoadModelFromFile(const std::string& path, const LoadLimits& limits,
                                             std::vector<std::string>* external_files);
// A model in `size` bytes at `data` that `holder` keeps alive (tensors view them in place), its
// external data found in `base_dir`, where the files of `preopened` (by location) are used as
// they are mapped rather than opened again by name. `source` names it in errors.
std::shared_ptr<ir::Model> LoadModelFromMappedBytes(
    const uint8_t* data, size_t size, std::shared_ptr<const void> holder, const std::string& source,
    const std::string& base_dir, const std::map<std::string, std::shared_ptr<const MappedFile>>& preopened);

}  // namespace onyx
