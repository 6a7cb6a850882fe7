#include "providers/provider.h"

namespace onyx {
namespace {

class CpuProvider final : public ExecutionProvider {
 public:
  const std::string& name() const override { return name_; }
  Device device() const override { return Device{}; }
  Allocator* allocator() const override { return CpuAllocator(); }

 private:
  std::string name_ = "CPU";
};

}  // namespace

std::unique_ptr<ExecutionProvider> MakeCpuProvider() { return std::make_unique<CpuProvider>(); }

}  // namespace onyx
