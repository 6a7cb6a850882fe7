#include "runtime/small_page_packs.h"

#include <atomic>
#include <new>

#include "base/aligned_memory.h"
#include "base/check.h"

namespace onyx {
namespace {

constexpr size_t kPackAlignment = 64;

PackedWeightStore::Blob Owned(void* p, size_t bytes) {
  if (p == nullptr) throw std::bad_alloc();
  PackedWeightStore::Blob blob;
  blob.owner = std::shared_ptr<void>(p, [](void* q) { FreeAligned(q); });
  blob.data = p;
  blob.bytes = bytes;
  return blob;
}

// Below 2 MB a block of its own would not be a huge page anyway: those keep sharing the slabs.
void* SmallPack(size_t bytes) { return AllocateAligned(bytes, kPackAlignment, /*share_huge_pages=*/true); }

// A store that only places packs: each is filled afresh, none kept.
class PlacingStore : public PackedWeightStore {
 public:
  Blob Get(const std::string& /*key*/, size_t bytes, const std::function<void(void*)>& fill) override {
    Blob blob = Owned(Place(bytes), bytes);
    fill(blob.data);
    return blob;
  }
  Blob Fresh(size_t bytes) override { return Owned(Place(bytes), bytes); }

 private:
  virtual void* Place(size_t bytes) = 0;
};

class SmallPagePacks final : public PlacingStore {
  void* Place(size_t bytes) override {
    return bytes >= kHugePageBytes ? AllocateAlignedSmallPages(bytes, kPackAlignment) : SmallPack(bytes);
  }
};

class AutoPagePacks final : public PlacingStore {
 public:
  explicit AutoPagePacks(std::chrono::nanoseconds slow_fault) : slow_fault_(slow_fault) {}

 private:
  void* Place(size_t bytes) override {
    if (bytes < kHugePageBytes) return SmallPack(bytes);
    if (host_faults_.load(std::memory_order_relaxed)) return AllocateAlignedSmallPages(bytes, kPackAlignment);
    void* p = AllocateAligned(bytes, kPackAlignment);  // 2 MB aligned, its whole 2 MB pages advised
    if (p != nullptr) {
      // The first touch faults in the first 2 MB page (unless the memory was in use already).
      const auto start = std::chrono::steady_clock::now();
      *static_cast<volatile char*>(p) = 0;
      if (std::chrono::steady_clock::now() - start > slow_fault_) host_faults_.store(true, std::memory_order_relaxed);
    }
    return p;
  }

  const std::chrono::nanoseconds slow_fault_;
  std::atomic<bool> host_faults_{false};  // a fresh 2 MB page took a host fault: small pages from now on
};

}  // namespace

PackPlacement PackPlacementFromConfig(const std::map<std::string, std::string>& entries) {
  const auto it = entries.find(kConfigPacksOnSmallPages);
  if (it == entries.end() || it->second == "auto") return PackPlacement::kAuto;
  ONYX_CHECK(it->second == "0" || it->second == "1", kInvalidArgument, "session config entry ",
             kConfigPacksOnSmallPages, " must be \"0\", \"1\" or \"auto\", got '", it->second, "'");
  return it->second == "1" ? PackPlacement::kSmallPages : PackPlacement::kHugePages;
}

std::shared_ptr<PackedWeightStore> PackStoreFor(PackPlacement placement, std::chrono::nanoseconds slow_fault) {
  switch (placement) {
    case PackPlacement::kHugePages:
      return nullptr;
    case PackPlacement::kSmallPages: {
      static const auto store = std::make_shared<SmallPagePacks>();  // stateless: one for all sessions
      return store;
    }
    case PackPlacement::kAuto:
      return std::make_shared<AutoPagePacks>(slow_fault);
  }
  return nullptr;
}

}  // namespace onyx
