// Packed weights on small pages, for sessions whose creation matters more than their Runs
// (session config entry onyx.memory.packs_on_small_pages = 1; default 0).
//
// By default a pack sits on fresh 2 MB pages (base/aligned_memory.h): on a VM that hands freed
// memory back to its host such pages cost a host fault for all 2 MB, most of a CNN's creation,
// while small pages mostly reuse memory the guest still holds. The Runs then pay a TLB miss per
// 4 KB of weights streamed: measured on the 2-core Xeon (docs/memory.md), creation 25-40% faster
// (ResNet-50, BERT-base, 1 and 2 threads) against Runs 1.4-5% slower. Hence opt-in.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "providers/kernel.h"

namespace onyx {

inline constexpr const char* kConfigPacksOnSmallPages = "onyx.memory.packs_on_small_pages";

// Whether the entries ask for it; throws Error(kInvalidArgument) on a value not 0 or 1.
bool PacksOnSmallPagesFromConfig(const std::map<std::string, std::string>& entries);

// A pack store (what kernels take their packs from) whose packs of 2 MB or more are populated
// small-page mappings of their own and smaller ones share huge-page slabs, as without a store.
// It keeps nothing of what it hands out.
std::shared_ptr<PackedWeightStore> SmallPagePackStore();

}  // namespace onyx
