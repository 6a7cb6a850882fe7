#include "linalg/conv_scratch.h"

namespace onyx::linalg {
namespace {

struct Kept {
  AlignedFloats buffer;
  bool in_use = false;
};

Kept& SlotOf(ScratchSlot slot) {
  thread_local Kept kept[static_cast<int>(ScratchSlot::kCount)];
  return kept[static_cast<int>(slot)];
}

}  // namespace

ConvScratch::ConvScratch(ScratchSlot slot, size_t floats) {
  Kept& k = SlotOf(slot);
  if (k.in_use || floats * sizeof(float) > kMaxKeptBytes) {
    fresh_ = AlignedFloats(floats);
    data_ = fresh_.data();
    return;
  }
  // Grown with some headroom, so a slowly growing series of sizes does not reallocate each time.
  if (k.buffer.size() < floats) k.buffer = AlignedFloats(floats + floats / 4);
  k.in_use = true;
  in_use_ = &k.in_use;
  data_ = k.buffer.data();
}

size_t ConvScratch::KeptFloats(ScratchSlot slot) { return SlotOf(slot).buffer.size(); }

ConvScratch::~ConvScratch() {
  if (in_use_ != nullptr) *in_use_ = false;
}

}  // namespace onyx::linalg
