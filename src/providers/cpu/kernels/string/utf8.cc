#include "providers/cpu/kernels/string/utf8.h"

namespace onyx::utf8 {

char32_t Next(std::string_view s, size_t& i, bool* valid) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  if (valid) *valid = true;
  if (b0 < 0x80) {
    ++i;
    return b0;
  }
  int len = 0;
  char32_t c = 0;
  if ((b0 & 0xE0) == 0xC0) len = 2, c = b0 & 0x1F;
  else if ((b0 & 0xF0) == 0xE0) len = 3, c = b0 & 0x0F;
  else if ((b0 & 0xF8) == 0xF0) len = 4, c = b0 & 0x07;
  bool ok = len != 0 && i + len <= s.size();
  for (int k = 1; ok && k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) ok = false;
    else c = (c << 6) | (byte(i + k) & 0x3F);
  }
  // Overlong forms, surrogates and values past U+10FFFF are invalid.
  static constexpr char32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (ok && (c < kMin[len] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))) ok = false;
  if (!ok) {
    if (valid) *valid = false;
    ++i;
    return b0;
  }
  i += static_cast<size_t>(len);
  return c;
}

namespace {

// Blocks where upper and lower case alternate (even = upper, odd = lower, or the reverse).
bool InAlternating(char32_t c, char32_t first, char32_t last) { return c >= first && c <= last; }

}  // namespace

char32_t ToLower(char32_t c) {
  if (c < 0x80) return (c >= 'A' && c <= 'Z') ? c + 32 : c;
  if ((c >= 0xC0 && c <= 0xDE && c != 0xD7)) return c + 32;
  if (InAlternating(c, 0x100, 0x12F) || InAlternating(c, 0x132, 0x137) || InAlternating(c, 0x14A, 0x177))
    return (c % 2 == 0) ? c + 1 : c;
  if (InAlternating(c, 0x139, 0x148) || InAlternating(c, 0x179, 0x17E)) return (c % 2 == 1) ? c + 1 : c;
  if (c == 0x130) return 'i';
  if (c == 0x178) return 0xFF;
  if (c >= 0x391 && c <= 0x3AB && c != 0x3A2) return c + 32;
  if (c == 0x386) return 0x3AC;
  if (c >= 0x388 && c <= 0x38A) return c + 37;
  if (c == 0x38C) return 0x3CC;
  if (c == 0x38E || c == 0x38F) return c + 63;
  if (c >= 0x400 && c <= 0x40F) return c + 80;
  if (c >= 0x410 && c <= 0x42F) return c + 32;
  if (InAlternating(c, 0x460, 0x481) || InAlternating(c, 0x48A, 0x4BF) || InAlternating(c, 0x4D0, 0x52F))
    return (c % 2 == 0) ? c + 1 : c;
  if (InAlternating(c, 0x4C1, 0x4CE)) return (c % 2 == 1) ? c + 1 : c;
  if (c == 0x4C0) return 0x4CF;
  if (c >= 0x531 && c <= 0x556) return c + 48;
  if (InAlternating(c, 0x1E00, 0x1E95) || InAlternating(c, 0x1EA0, 0x1EFF)) return (c % 2 == 0) ? c + 1 : c;
  if (c >= 0xFF21 && c <= 0xFF3A) return c + 32;
  return c;
}

char32_t ToUpper(char32_t c) {
  if (c < 0x80) return (c >= 'a' && c <= 'z') ? c - 32 : c;
  if (c >= 0xE0 && c <= 0xFE && c != 0xF7) return c - 32;
  if (c == 0xFF) return 0x178;
  if (c == 0xB5) return 0x39C;
  if (InAlternating(c, 0x100, 0x12F) || InAlternating(c, 0x132, 0x137) || InAlternating(c, 0x14A, 0x177))
    return (c % 2 == 1) ? c - 1 : c;
  if (InAlternating(c, 0x139, 0x148) || InAlternating(c, 0x179, 0x17E)) return (c % 2 == 0) ? c - 1 : c;
  if (c == 0x131) return 'I';
  if (c == 0x17F) return 'S';
  if (c >= 0x3B1 && c <= 0x3CB && c != 0x3C2) return c - 32;
  if (c == 0x3C2) return 0x3A3;
  if (c == 0x3AC) return 0x386;
  if (c >= 0x3AD && c <= 0x3AF) return c - 37;
  if (c == 0x3CC) return 0x38C;
  if (c == 0x3CD || c == 0x3CE) return c - 63;
  if (c >= 0x430 && c <= 0x44F) return c - 32;
  if (c >= 0x450 && c <= 0x45F) return c - 80;
  if (InAlternating(c, 0x460, 0x481) || InAlternating(c, 0x48A, 0x4BF) || InAlternating(c, 0x4D0, 0x52F))
    return (c % 2 == 1) ? c - 1 : c;
  if (InAlternating(c, 0x4C1, 0x4CE)) return (c % 2 == 0) ? c - 1 : c;
  if (c == 0x4CF) return 0x4C0;
  if (c >= 0x561 && c <= 0x586) return c - 48;
  if (InAlternating(c, 0x1E00, 0x1E95) || InAlternating(c, 0x1EA0, 0x1EFF)) return (c % 2 == 1) ? c - 1 : c;
  if (c >= 0xFF41 && c <= 0xFF5A) return c - 32;
  return c;
}

namespace {

template <typename Map>
std::string MapString(std::string_view s, Map map) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const size_t start = i;
    bool valid = true;
    const char32_t c = Next(s, i, &valid);
    if (!valid) out.append(s.substr(start, i - start));
    else Append(out, map(c));
  }
  return out;
}

}  // namespace

std::string Lower(std::string_view s) { return MapString(s, ToLower); }
std::string Upper(std::string_view s) { return MapString(s, ToUpper); }

bool IsSpace(char32_t c) {
  if (c < 0x80) return c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F);
  return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x3000;
}

}  // namespace onyx::utf8
