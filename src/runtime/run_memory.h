// Where one Run's memory comes from: the session's arena (or the plain CPU allocator when the
// arena is off) and, with SessionOptions::enable_mem_pattern, a memory-pattern allocator keyed by
// the Run's input shapes, which places intermediates in the block the last Run with those shapes
// left behind. Graph outputs then come from the arena itself, so the block stays free for the
// next Run while the caller holds them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "onyx/value.h"
#include "tensor/arena_allocator.h"

namespace onyx {

struct RunMemory {
  std::shared_ptr<Allocator> pattern;  // null without a pattern
  Allocator* allocator = nullptr;         // intermediates and kernel workspace
  Allocator* output_allocator = nullptr;  // graph outputs (null: allocator)
};

// The key of the inputs' dtypes and shapes; "" when an input is not a tensor (sequences and
// maps vary in ways shapes do not say, so such Runs keep no pattern).
std::string MemoryPatternKey(const std::vector<Value>& inputs);

RunMemory PrepareRunMemory(ArenaAllocator* arena, bool enable_mem_pattern, const std::vector<Value>& inputs);

}  // namespace onyx
