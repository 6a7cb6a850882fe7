// Monotonic wall-clock helpers.
#pragma once

#include <chrono>
#include <cstdint>

namespace onyx {

inline int64_t NowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace onyx
