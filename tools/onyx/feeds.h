// Building a model's feeds from the command line: .npy / TensorProto files, or seeded random
// values with symbolic dims from --dim.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "onyx/session.h"

namespace onyx::cli {

struct FeedSpec {
  std::vector<std::string> inputs;  // NAME=FILE
  std::vector<std::string> dims;    // NAME=N (symbolic dim values)
  bool random = false;
  uint64_t seed = 0;
};

// Throws Error(kInvalidArgument) on a malformed spec, an unknown input, or a missing one.
NamedValues BuildFeeds(const Session& session, const FeedSpec& spec);

// A value read from .npy or .pb; `type` picks the proto kind for .pb files.
Value ReadValue(const std::string& path, const TypeInfo* type);

}  // namespace onyx::cli
