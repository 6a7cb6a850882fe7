// Cutting tensors into pieces along an axis and putting pieces back together: shared by the
// sequence ops (SplitToSequence, ConcatFromSequence) and the control-flow ops (Loop and Scan
// stack per-iteration outputs, Scan slices its inputs). Works for every element type,
// strings and packed sub-byte types included.
#pragma once

#include <cstdint>
#include <vector>

#include "onyx/tensor.h"

namespace onyx {

// Copies `count` elements of src starting at element src_offset into dst at dst_offset.
// Both tensors must have the same element type.
void CopyElements(const Tensor& src, int64_t src_offset, Tensor& dst, int64_t dst_offset, int64_t count);

// Element `index` of dimension `axis`, with that dimension removed (a copy).
Tensor SliceAlongAxis(const Tensor& t, int64_t axis, int64_t index);

// Pieces of equal shape stacked along a new dimension inserted at `axis` (0..rank).
// Throws Error(kRuntime) when shapes or element types differ.
Tensor StackAlongAxis(const std::vector<Tensor>& pieces, int64_t axis);

// Pieces concatenated along existing dimension `axis`; other dimensions must match.
Tensor ConcatAlongAxis(const std::vector<Tensor>& pieces, int64_t axis);

// Consecutive chunks of `sizes` along `axis` (the sizes sum to the dimension).
std::vector<Tensor> SplitAlongAxis(const Tensor& t, int64_t axis, const std::vector<int64_t>& sizes);

}  // namespace onyx
