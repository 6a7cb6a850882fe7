// Checks a loaded model against ONNX's rules that every later stage relies on, so that no pass,
// shape rule or kernel sees a graph that breaks them: opset versions in range, each standard
// node's input and output counts within its schema's, declared types with valid element types,
// ranks and dims within the loader's limits. Throws Error(kInvalidModel) naming what is wrong.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "ir/graph.h"

namespace onyx {

// Bounds on what a model may declare (graph inputs, outputs, value_info, initializers): a model
// asking for more is an error, not an out-of-memory kill. Session config entries
// onyx.loader.max_rank / max_dim / max_elements change them.
struct LoadLimits {
  int64_t max_rank = 64;
  int64_t max_dim = int64_t{1} << 32;
  int64_t max_elements = int64_t{1} << 32;  // elements of one tensor (16 GiB of float32)
};

// Session config entries that set the limits (decimal integers >= 1).
inline constexpr const char* kConfigMaxRank = "onyx.loader.max_rank";
inline constexpr const char* kConfigMaxDim = "onyx.loader.max_dim";
inline constexpr const char* kConfigMaxElements = "onyx.loader.max_elements";
bool IsLoadLimitsConfigKey(const std::string& key);
// The limits with those entries applied; throws Error(kInvalidArgument) on a malformed value.
LoadLimits LoadLimitsFromConfig(const std::map<std::string, std::string>& entries);

// The newest opset of ai.onnx ("") or ai.onnx.ml that Onyx knows (from onnx's schemas); 0 for
// other domains, whose versions are not bounded above.
int64_t NewestKnownOpset(const std::string& domain);

// Before the graph is read: every imported version is >= 1 and a standard domain's is at most
// the newest known.
void ValidateOpsetImports(const std::map<std::string, int64_t>& opsets, const std::string& source);

// After the graph is read and sorted (subgraphs included).
void ValidateModel(const ir::Model& model, const LoadLimits& limits, const std::string& source);

}  // namespace onyx
