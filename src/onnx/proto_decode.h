// Decoding of ONNX protobuf messages into Onyx values: TensorProto (raw, typed, external data),
// SparseTensorProto, TypeProto, and the SequenceProto / MapProto / OptionalProto of test data.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "onnx/wire_reader.h"
#include "onyx/value.h"
#include "platform/mapped_file.h"

namespace onyx::proto {

// State shared while decoding one model (or one test-data file).
struct DecodeContext {
  std::string source;               // model path (or "<bytes>") for error texts
  std::string base_dir;             // folder that external data must live in; empty: none allowed
  std::shared_ptr<const void> bytes_holder;  // keeps the bytes being decoded alive for views
  std::map<std::string, std::shared_ptr<const MappedFile>> external_files;
  // The same files by the location a tensor names, once resolved and checked: resolving
  // (weakly_canonical, a readlink per path component) for every tensor was ~0.5 ms of a small
  // model's creation-cache hit, whose ~100 tensors all name the cache file.
  std::map<std::string, std::shared_ptr<const MappedFile>> external_by_location;
  int depth = 0;                    // nesting of subgraphs, bounded against hostile input
  // Lets the pages of mapped files read so far go (they are read again from the file if used):
  // called every so many bytes of tensors copied out of them, so a model whose tensors are
  // misaligned in its file is not held twice, as copies and as file pages, while it loads.
  std::function<void()> release_read_pages;
  size_t copied_since_release = 0;
};

Tensor DecodeTensor(WireReader r, DecodeContext& ctx);
Tensor DecodeSparseTensor(WireReader r, DecodeContext& ctx);
std::shared_ptr<const TypeInfo> DecodeType(WireReader r, DecodeContext& ctx);
// SequenceProto, MapProto and OptionalProto, as in ONNX test data.
Value DecodeSequence(WireReader r, DecodeContext& ctx);
Value DecodeMap(WireReader r, DecodeContext& ctx);
Value DecodeOptional(WireReader r, DecodeContext& ctx);

// Reads a test-data file (input_0.pb ...) holding the proto that suits `type`: a TensorProto
// for tensors (or when type is null), SequenceProto, MapProto or OptionalProto otherwise.
Value ReadValueFile(const std::string& path, const TypeInfo* type);

}  // namespace onyx::proto
