// Where packed weights live (session config entry onyx.memory.packs_on_small_pages):
//   "0"    on fresh 2 MB pages (base/aligned_memory.h): Runs stream them with the fewest TLB misses;
//   "1"    packs of 2 MB or more on small pages, for sessions whose creation matters more than
//          their Runs;
//   "auto" (the default) on 2 MB pages while they come cheap, then on small pages.
//
// On a VM that hands freed memory back to its host, a fresh 2 MB page the guest had given back
// costs a host fault for all 2 MB (measured on the 2-core EPYC: 4.3-4.6 ms against 0.17-0.26 ms
// for one the guest still held), most of a CNN's cold creation, while small pages mostly reuse
// memory the guest still holds. The Runs then pay a TLB miss per 4 KB of weights streamed:
// measured on the 2-core Xeon (docs/memory.md), creation 25-40% faster (ResNet-50, BERT-base, 1
// and 2 threads) against Runs 1.4-5% slower; about 1% on the EPYC. "auto" times the first touch
// of each large pack's first 2 MB page and, from the first that took a host fault on, puts this
// session's remaining large packs on small pages: where 2 MB pages are cheap nothing changes.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "providers/kernel.h"

namespace onyx {

inline constexpr const char* kConfigPacksOnSmallPages = "onyx.memory.packs_on_small_pages";

enum class PackPlacement { kHugePages, kSmallPages, kAuto };

// From the entries ("0", "1" or "auto"; kAuto without the entry); throws Error(kInvalidArgument)
// on another value.
PackPlacement PackPlacementFromConfig(const std::map<std::string, std::string>& entries);

// A first touch of a fresh 2 MB page slower than this took a host fault: the two cases measured
// 0.17-0.26 ms and 4.3-4.6 ms.
inline constexpr std::chrono::nanoseconds kSlowHugePageFault = std::chrono::milliseconds(1);

// The store a session's kernels take their packs from for `placement`: null (fresh memory, on
// huge pages) for kHugePages, one shared stateless store for kSmallPages, a store of its own per
// session for kAuto (its verdict holds for that session's creation). slow_fault: for tests.
std::shared_ptr<PackedWeightStore> PackStoreFor(PackPlacement placement,
                                                std::chrono::nanoseconds slow_fault = kSlowHugePageFault);

}  // namespace onyx
