// This machine's memory (RAM + swap): no single block larger than that can be backed, so the CPU
// allocator refuses such requests with an error (rather than let overcommit grant them and the
// OOM killer strike later), and it is the default of the run-time limit onyx.run.max_tensor_bytes
// (docs/memory.md).
#pragma once

#include <cstdint>

namespace onyx {

// Read once; INT64_MAX where the system does not say.
int64_t MachineMemoryBytes();

}  // namespace onyx
