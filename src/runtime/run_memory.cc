#include "runtime/run_memory.h"

#include <algorithm>
#include <limits>

#include "base/check.h"
#include "base/config_value.h"
#include "tensor/machine_memory.h"

namespace onyx {

namespace {

[[noreturn]] void FailOverLimit(const std::string& what, int64_t bytes, int64_t limit) {
  ONYX_THROW(kOutOfMemory, what, bytes, " bytes, more than the limit of ", limit,
             " bytes for one tensor (session config ", kConfigRunMaxTensorBytes, ")");
}

// One Run's allocator: refuses any request over the limit before the allocator under it sees it
// (the Tensor that asked prefixes its dtype and shape, the Run the node and its inputs). Tensors
// keep it, and through it the allocator under it, alive.
class LimitedAllocator final : public Allocator, public std::enable_shared_from_this<LimitedAllocator> {
 public:
  LimitedAllocator(Allocator* inner, std::shared_ptr<void> inner_owner, int64_t max_bytes)
      : inner_(inner), inner_owner_(std::move(inner_owner)), max_bytes_(max_bytes) {}

  void* Allocate(size_t bytes) override {
    if (bytes > static_cast<size_t>(max_bytes_)) FailOverLimit("", static_cast<int64_t>(bytes), max_bytes_);
    return inner_->Allocate(bytes);
  }
  void Free(void* p) override { inner_->Free(p); }
  Device device() const override { return inner_->device(); }
  std::shared_ptr<void> KeepAlive() override { return shared_from_this(); }

 private:
  Allocator* inner_;
  std::shared_ptr<void> inner_owner_;
  int64_t max_bytes_;
};

std::shared_ptr<Allocator> Limited(Allocator* inner, std::shared_ptr<void> owner, const RunLimits& limits) {
  return std::make_shared<LimitedAllocator>(inner, std::move(owner), limits.max_tensor_bytes);
}

}  // namespace

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

RunMemory PrepareRunMemory(ArenaAllocator* arena, bool enable_mem_pattern, const std::vector<Value>& inputs,
                           const RunLimits& limits) {
  RunMemory memory;
  const std::string key = arena != nullptr && enable_mem_pattern ? MemoryPatternKey(inputs) : "";
  if (key.empty()) {
    Allocator* base = arena != nullptr ? static_cast<Allocator*>(arena) : CpuAllocator();
    memory.pattern = Limited(base, base->KeepAlive(), limits);
    memory.allocator = memory.pattern.get();
    return memory;
  }
  std::shared_ptr<Allocator> pattern = arena->BeginPatternRun(key);
  Allocator* inner = pattern.get();
  memory.pattern = Limited(inner, std::move(pattern), limits);
  memory.allocator = memory.pattern.get();
  memory.output_owner = Limited(arena, arena->KeepAlive(), limits);
  memory.output_allocator = memory.output_owner.get();
  return memory;
}

bool IsRunLimitsConfigKey(const std::string& key) {
  return key == kConfigRunMaxTensorBytes || key == kConfigInPlaceReuse;
}

bool InPlaceReuseFromConfig(const std::map<std::string, std::string>& entries) {
  return ConfigSwitch(entries, kConfigInPlaceReuse, true);
}

RunLimits RunLimitsFromConfig(const std::map<std::string, std::string>& entries) {
  RunLimits limits;
  limits.max_tensor_bytes = MachineMemoryBytes();
  const auto it = entries.find(kConfigRunMaxTensorBytes);
  if (it == entries.end()) return limits;
  limits.max_tensor_bytes = PositiveConfigInt(kConfigRunMaxTensorBytes, it->second);
  return limits;
}

void CheckTensorLimits(const RunLimits& limits, DataType dtype, const std::vector<int64_t>& shape,
                       const std::string& what) {
  // Saturating products: a shape whose size overflows int64 is over every limit.
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t elements = 1;
  for (int64_t d : shape) {
    if (d == 0) {
      elements = 0;
      break;
    }
    if (d > 0) elements = elements > kMax / d ? kMax : elements * d;  // a negative dim is the kernel's to report
  }
  const int64_t bits = std::max(DataTypeBits(dtype), 1);
  const int64_t bytes = elements > kMax / bits ? kMax : (elements * bits) / 8 + ((elements * bits) % 8 != 0);
  if (bytes > limits.max_tensor_bytes)
    FailOverLimit(StrCat(what, " ", DataTypeName(dtype), "[", StrJoin(shape, ","), "]: "), bytes,
                  limits.max_tensor_bytes);
}

}  // namespace onyx
