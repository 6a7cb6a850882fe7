#include "tensor/machine_memory.h"

#include <sys/sysinfo.h>

#include <limits>

namespace onyx {

int64_t MachineMemoryBytes() {
  static const int64_t bytes = [] {
    constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
    struct sysinfo info {};
    if (sysinfo(&info) != 0) return kMax;
    const auto unit = static_cast<unsigned __int128>(info.mem_unit == 0 ? 1 : info.mem_unit);
    const unsigned __int128 total = (static_cast<unsigned __int128>(info.totalram) + info.totalswap) * unit;
    return total > static_cast<unsigned __int128>(kMax) ? kMax : static_cast<int64_t>(total);
  }();
  return bytes;
}

}  // namespace onyx
