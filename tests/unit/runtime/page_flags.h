// Which pages a block lives on, read from /proc/self/smaps: the VmFlags of the mapping holding an
// address ("hg": advised onto huge pages, "nh": advised against them).
#pragma once

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

namespace onyx::test {

// The VmFlags line of the mapping that holds p ("" when no mapping holds it).
inline std::string VmFlagsOf(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto address = reinterpret_cast<uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> begin >> dash >> end && dash == '-' && line.find(':') > line.find(' ')) {
      inside = address >= begin && address < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

inline bool HugePageAdvised(const void* p) { return VmFlagsOf(p).find(" hg") != std::string::npos; }
inline bool HugePageRefused(const void* p) { return VmFlagsOf(p).find(" nh") != std::string::npos; }

inline bool ThpAvailable() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode;
  return std::getline(f, mode) && mode.find("[never]") == std::string::npos;
}

}  // namespace onyx::test
