// Multidirectional (numpy) broadcasting of shapes, and walking two or three broadcast inputs
// in output order.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "onyx/tensor.h"

namespace onyx {

// The broadcast of all shapes; throws Error(kRuntime) naming them when they do not broadcast.
Shape BroadcastShapes(const std::vector<Shape>& shapes);
// The same for two shapes, without building a list of them (run on every binary op's Run).
Shape BroadcastShapes(const Shape& a, const Shape& b);

// For an input of `in_shape` broadcast to `out_shape`: the element stride of each output
// dimension in the input (0 where the input is broadcast).
std::vector<int64_t> BroadcastStrides(const Shape& in_shape, const Shape& out_shape);

// Calls fn(out_offset, in_offsets..., count) for runs of `count` consecutive output elements in
// which every input advances by its `inner_step` (0 or 1): a broadcast input stays put.
// Inputs: up to 3 shapes. The innermost dimensions are merged where possible so runs are long.
struct BroadcastRun {
  int64_t out = 0;
  int64_t in[3] = {0, 0, 0};
  int64_t count = 0;
  int64_t step[3] = {0, 0, 0};  // 0: this input is broadcast along the run, 1: it advances
};
void ForEachBroadcastRun(const Shape& out_shape, const std::vector<Shape>& in_shapes,
                         const std::function<void(const BroadcastRun&)>& fn);

// Normalizes a possibly negative axis for rank r; throws naming the axis when out of range.
int64_t NormalizeAxis(int64_t axis, int64_t rank);

}  // namespace onyx
