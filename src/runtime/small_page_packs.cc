#include "runtime/small_page_packs.h"

#include <new>

#include "base/aligned_memory.h"
#include "base/config_value.h"

namespace onyx {
namespace {

constexpr size_t kPackAlignment = 64;

class SmallPagePacks final : public PackedWeightStore {
 public:
  Blob Get(const std::string& /*key*/, size_t bytes, const std::function<void(void*)>& fill) override {
    // Below 2 MB a block of its own would not be a huge page anyway; those keep sharing slabs.
    void* p = bytes >= kHugePageBytes ? AllocateAlignedSmallPages(bytes, kPackAlignment)
                                      : AllocateAligned(bytes, kPackAlignment, /*share_huge_pages=*/true);
    if (p == nullptr) throw std::bad_alloc();
    Blob blob;
    blob.owner = std::shared_ptr<void>(p, [](void* q) { FreeAligned(q); });
    fill(p);
    blob.data = p;
    blob.bytes = bytes;
    return blob;
  }
};

}  // namespace

bool PacksOnSmallPagesFromConfig(const std::map<std::string, std::string>& entries) {
  return ConfigSwitch(entries, kConfigPacksOnSmallPages, false);
}

std::shared_ptr<PackedWeightStore> SmallPagePackStore() {
  static const auto store = std::make_shared<SmallPagePacks>();  // stateless: one for all sessions
  return store;
}

}  // namespace onyx
