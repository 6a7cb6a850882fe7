// Reading session config entries with one error wording for each kind: whole numbers >= 1 (the
// loader's and the run's size limits) and switches ("0" or "1").
#pragma once

#include <cstdint>
#include <exception>
#include <map>
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

// The switch `key` of `entries`, or `fallback` where they lack it.
inline bool ConfigSwitch(const std::map<std::string, std::string>& entries, const std::string& key, bool fallback) {
  const auto it = entries.find(key);
  if (it == entries.end()) return fallback;
  ONYX_CHECK(it->second == "0" || it->second == "1", kInvalidArgument, "session config entry ", key,
             " must be \"0\" or \"1\", got '", it->second, "'");
  return it->second == "1";
}

}  // namespace onyx
