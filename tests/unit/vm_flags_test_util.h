// Which pages hold a block: the VmFlags line of its mapping in /proc/self/smaps (Linux only),
// for tests that a copy which lives only until it is packed goes on small pages (" nh").
#pragma once

#if defined(__linux__)
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

namespace onyx::test {

// The VmFlags of the mapping holding p, or "" when none is found.
inline std::string VmFlagsOf(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto address = reinterpret_cast<uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    uintptr_t begin = 0, end = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &begin, &end) == 2 && line.find(' ') > line.find('-')) {
      inside = begin <= address && address < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

}  // namespace onyx::test
#endif
