#include "runtime/run_memory.h"

#include "base/check.h"

namespace onyx {

std::string MemoryPatternKey(const std::vector<Value>& inputs) {
  std::string key = "inputs:";
  for (const Value& v : inputs) {
    if (v.is_none()) {
      key += "none;";
      continue;
    }
    if (!v.is_tensor()) return "";
    key += StrCat(static_cast<int>(v.tensor().dtype()), ShapeToString(v.tensor().shape()), ";");
  }
  return key;
}

RunMemory PrepareRunMemory(ArenaAllocator* arena, bool enable_mem_pattern, const std::vector<Value>& inputs) {
  RunMemory memory;
  memory.allocator = arena != nullptr ? static_cast<Allocator*>(arena) : CpuAllocator();
  if (arena == nullptr || !enable_mem_pattern) return memory;
  const std::string key = MemoryPatternKey(inputs);
  if (key.empty()) return memory;
  memory.pattern = arena->BeginPatternRun(key);
  memory.allocator = memory.pattern.get();
  memory.output_allocator = arena;
  return memory;
}

}  // namespace onyx
