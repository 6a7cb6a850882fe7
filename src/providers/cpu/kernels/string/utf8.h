// Small UTF-8 helpers for the string kernels: decoding code points (invalid bytes come back
// one at a time as themselves, so any byte string round-trips), encoding, simple case mapping
// and whitespace as Python's str.isspace() sees it. No dependence on the process locale.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/utf8_encode.h"  // Append

namespace onyx::utf8 {

// Decodes the code point starting at s[i] and advances i. Invalid or truncated sequences yield
// the single byte (as a value 0x80..0xFF flagged by `valid` = false).
char32_t Next(std::string_view s, size_t& i, bool* valid = nullptr);

// Simple (one-to-one) Unicode case mapping for the Latin, Greek, Cyrillic and Armenian blocks
// and the fullwidth Latin letters; other code points map to themselves.
char32_t ToLower(char32_t c);
char32_t ToUpper(char32_t c);
// Whole strings; bytes that are not valid UTF-8 are copied unchanged.
std::string Lower(std::string_view s);
std::string Upper(std::string_view s);

// Python's str.isspace() for a code point.
bool IsSpace(char32_t c);

}  // namespace onyx::utf8
