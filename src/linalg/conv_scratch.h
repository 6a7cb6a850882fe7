// Per-thread scratch buffers of the convolution engines, kept from one Run to the next.
// Allocating them afresh per Run churned glibc's heap: a padded input or a Winograd task's
// tiles of a few hundred KB grew the heap (brk, then page faults on the new pages) and freeing
// them trimmed it again, every Run (7 brk calls and ~0.4 ms of system time per Run of a small
// keyword-spotting net, which computes in 0.3 ms). A kept buffer is faulted in once.
#pragma once

#include <cstddef>
#include <cstdint>

#include "linalg/gemm.h"

namespace onyx::linalg {

// What a buffer is for: two buffers alive at once on one thread must use different slots.
// kInput outlives the engine's task loop (the caller runs tasks meanwhile); the others live
// inside one task range or, for Winograd's phased form, across it.
enum class ScratchSlot : int {
  kInput,    // DirectConv's padded / blocked input
  kTaskA,    // per-task buffers, in the order an engine asks for them
  kTaskB,
  kTaskC,
  kTaskD,
  kTaskE,
  kTaskF,
  kCount
};

// A lease of `floats` 64-byte-aligned floats (contents unspecified) from this thread's buffer
// for `slot`, grown when too small. Buffers over kMaxKeptBytes, and a slot already leased on
// this thread (a nesting no engine does today), get a fresh allocation freed with the lease.
class ConvScratch {
 public:
  static constexpr size_t kMaxKeptBytes = size_t{16} << 20;

  ConvScratch(ScratchSlot slot, size_t floats);
  ~ConvScratch();
  ConvScratch(const ConvScratch&) = delete;
  ConvScratch& operator=(const ConvScratch&) = delete;

  float* get() const { return data_; }
  // Floats this thread keeps for `slot` (0 before its first lease): tests check that an
  // engine did not stage a copy.
  static size_t KeptFloats(ScratchSlot slot);

 private:
  float* data_ = nullptr;
  bool* in_use_ = nullptr;  // the kept slot's flag, null for a fresh allocation
  AlignedFloats fresh_;
};

}  // namespace onyx::linalg
