// Where one Run's memory comes from: the session's arena (or the plain CPU allocator when the
// arena is off) and, with SessionOptions::enable_mem_pattern, a memory-pattern allocator keyed by
// the Run's input shapes, which places intermediates in the block the last Run with those shapes
// left behind. Graph outputs then come from the arena itself, so the block stays free for the
// next Run while the caller holds them. Every request also passes the Run's size limit
// (onyx.run.max_tensor_bytes), so a model asking for 2^40 elements at run time is an error naming
// the node and shapes, before anything is allocated, never an OOM kill (docs/memory.md).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "onyx/value.h"
#include "tensor/arena_allocator.h"

namespace onyx {

// Session config entry: most bytes one tensor of a Run (fed, made by a kernel, or asked for as
// workspace) may take; a decimal integer >= 1.
inline constexpr const char* kConfigRunMaxTensorBytes = "onyx.run.max_tensor_bytes";
// Session config entry: "1" (default) lets elementwise outputs take over an intermediate input's
// buffer (in-place reuse, with enable_mem_reuse on); "0" gives them their own (to measure it).
inline constexpr const char* kConfigInPlaceReuse = "onyx.memory.in_place_reuse";
// Whether the entries allow in-place reuse; throws Error(kInvalidArgument) on a value not 0 or 1.
bool InPlaceReuseFromConfig(const std::map<std::string, std::string>& entries);

struct RunLimits {
  // Default: the machine's memory (RAM + swap): a tensor larger than that cannot be made without
  // the OOM killer or a failed allocation.
  int64_t max_tensor_bytes = 0;
};

bool IsRunLimitsConfigKey(const std::string& key);
// The defaults with the config entries applied; throws Error(kInvalidArgument) on a malformed value.
RunLimits RunLimitsFromConfig(const std::map<std::string, std::string>& entries);
// Throws Error(kOutOfMemory) when a tensor of `dtype` and `shape` needs more than the limit;
// `what` names it ("input 'x'"). A shape whose size overflows int64 is over any limit.
void CheckTensorLimits(const RunLimits& limits, DataType dtype, const std::vector<int64_t>& shape,
                       const std::string& what);

struct RunMemory {
  // Owns the Run's allocators (the limit wrapper and its memory-pattern allocator): reset it when
  // the Run is over, so the pattern block goes back for the next Run (once the Run's tensors are
  // gone).
  std::shared_ptr<Allocator> pattern;
  std::shared_ptr<Allocator> output_owner;  // owns output_allocator's wrapper
  Allocator* allocator = nullptr;           // intermediates and kernel workspace
  Allocator* output_allocator = nullptr;    // graph outputs (null: allocator)
};

// The key of the inputs' dtypes and shapes; "" when an input is not a tensor (sequences and
// maps vary in ways shapes do not say, so such Runs keep no pattern).
std::string MemoryPatternKey(const std::vector<Value>& inputs);

RunMemory PrepareRunMemory(ArenaAllocator* arena, bool enable_mem_pattern, const std::vector<Value>& inputs,
                           const RunLimits& limits);

}  // namespace onyx
