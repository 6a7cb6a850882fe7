// Writes the IR back as an ONNX ModelProto. Large tensors can go to one external data file
// beside the model (offsets aligned to 4096 so they can be memory-mapped), which also lifts
// protobuf's 2 GB limit.
#pragma once

#include <cstdint>
#include <string>

#include "ir/graph.h"

namespace onyx {

struct SaveOptions {
  // Tensors of at least this many bytes go to the external file; < 0 keeps everything inline.
  int64_t external_threshold_bytes = -1;
  // External file name, relative to the model's folder; default "<model file name>.data".
  std::string external_file_name;
};

// Serialized bytes of a model whose tensors are all inline.
std::string SerializeModel(const ir::Model& model);
// Writes `path` (and its external data file when the options ask for one). Inline data over
// 2 GB in total throws, asking for external data.
void SaveModel(const ir::Model& model, const std::string& path, const SaveOptions& options = {});

}  // namespace onyx
