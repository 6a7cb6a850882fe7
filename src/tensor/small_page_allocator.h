// A CPU allocator like CpuAllocator() whose blocks are never advised onto huge pages: for memory
// that lives only while a session is created (base/aligned_memory.h says why).
#pragma once

#include "onyx/allocator.h"

namespace onyx {

Allocator* CpuSmallPageAllocator();

}  // namespace onyx
