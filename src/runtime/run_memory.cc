#include "runtime/run_memory.h"

namespace onyx {

std::string MemoryPatternKey(const std::vector<Value>& inputs) {
  // Raw bytes, not text: it is built on every Run.
  std::string key = "inputs:";
  auto append = [&key](int64_t v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); };
  for (const Value& v : inputs) {
    if (v.is_none()) {
      append(-1);
      continue;
    }
    if (!v.is_tensor()) return "";
    append(static_cast<int64_t>(v.tensor().dtype()));
    append(static_cast<int64_t>(v.tensor().rank()));
    for (int64_t d : v.tensor().shape()) append(d);
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
