// JSON string literals for the files Onyx writes itself (profiles, `onyx run` value dumps).
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace onyx {

// Appends s as a quoted JSON string: quotes and backslashes escaped, control bytes as \u00XX;
// other bytes pass through (the text is UTF-8 already).
inline void AppendJsonString(std::string& out, std::string_view s) {
  out += '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
}

}  // namespace onyx
