// StrCat: builds a message from any streamable pieces. Used for error texts.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace onyx {

template <typename... Args>
std::string StrCat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

// "a, b, c" from any container of streamable items.
template <typename Container>
std::string StrJoin(const Container& items, const char* sep = ", ") {
  std::ostringstream os;
  bool first = true;
  for (const auto& item : items) {
    if (!first) os << sep;
    os << item;
    first = false;
  }
  return os.str();
}

}  // namespace onyx
