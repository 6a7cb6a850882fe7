// Reading a session config entry that must be a whole number >= 1 (the loader's and the run's
// size limits), with one error wording for all of them.
#pragma once

#include <cstdint>
#include <exception>
#include <string>

#include "base/check.h"

namespace onyx {

inline int64_t PositiveConfigInt(const std::string& key, const std::string& text) {
  size_t used = 0;
  int64_t v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  ONYX_CHECK(used == text.size() && !text.empty() && v >= 1, kInvalidArgument, "session config entry ", key, "='",
             text, "' is not an integer >= 1");
  return v;
}

}  // namespace onyx
