// Aligned heap memory for the buffers kernels stream: packed weights and the tensors the arena
// hands out. They are placed on transparent huge pages where the OS allows it (Linux with THP
// in "madvise" or "always" mode): on 4 KB pages every few rows of a weight panel or activation
// map costs a TLB miss, which shows most in a run after the process sat idle (measured 4-5% on
// MobileNetV2 and EfficientNet-B0 run 50 ms apart).
//   - Blocks of 2 MB or more start on a 2 MB boundary; their whole 2 MB pages are advised.
//   - With share_huge_pages, blocks from 4 KB up to 2 MB are carved from shared 8 MB slabs that
//     are advised whole, so the many small weights of a CNN share huge pages too. Meant for
//     long-lived blocks: a slab is released only when its last block is freed (one empty slab is
//     kept for the next allocation), and space freed inside a slab is not reused before that.
//   - Other blocks come from malloc.
#pragma once

#include <cstddef>

namespace onyx {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;

// At least `alignment` (a power of two) aligned; bytes of 0 still get a unique
// pointer. Returns null when the system is out of memory. Thread-safe. Release with FreeAligned.
void* AllocateAligned(size_t bytes, size_t alignment, bool share_huge_pages = false);
void FreeAligned(void* p);

// The same without the huge-page advice (release with FreeAligned), for blocks that live only
// while a session is created (copies of weights that are packed and then dropped): on a VM that
// hands freed memory back to its host, each fresh 2 MB page costs a host fault for all 2 MB, and
// such a page is nearly always fresh, while small pages mostly reuse memory the guest still holds
// (gpt2_small cold creation: see docs/memory.md). Blocks of 2 MB or more (alignment up to 4 KB)
// are mappings of their own, advised against huge pages, populated at once (their callers write
// all of them right away) and unmapped when freed.
void* AllocateAlignedSmallPages(size_t bytes, size_t alignment);

// Whether p is the start of one of those mappings of AllocateAlignedSmallPages, still allocated:
// memory of Onyx's own, never a caller's buffer, so whoever holds its only reference may write it.
bool IsOwnSmallPageMapping(const void* p);

}  // namespace onyx
