#include "ops/broadcast.h"

#include <algorithm>

#include "base/check.h"

namespace onyx {

Shape BroadcastShapes(const std::vector<Shape>& shapes) {
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (const auto& s : shapes) {
    const size_t offset = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[offset + i];
      const int64_t d = s[i];
      if (d == o || d == 1) continue;
      if (o == 1) {
        o = d;
        continue;
      }
      std::vector<std::string> names;
      for (const auto& sh : shapes) names.push_back(ShapeToString(sh));
      ONYX_THROW(kRuntime, "shapes ", StrJoin(names), " cannot be broadcast together (dimension ", offset + i, ")");
    }
  }
  return out;
}

Shape BroadcastShapes(const Shape& a, const Shape& b) {
  const Shape& longer = a.size() >= b.size() ? a : b;
  const Shape& shorter = a.size() >= b.size() ? b : a;
  Shape out = longer;
  const size_t offset = longer.size() - shorter.size();
  for (size_t i = 0; i < shorter.size(); ++i) {
    int64_t& o = out[offset + i];
    const int64_t d = shorter[i];
    if (d == o || d == 1) continue;
    if (o != 1) return BroadcastShapes(std::vector<Shape>{a, b});  // throws, naming both
    o = d;
  }
  return out;
}

std::vector<int64_t> BroadcastStrides(const Shape& in_shape, const Shape& out_shape) {
  const size_t rank = out_shape.size();
  std::vector<int64_t> strides(rank, 0);
  const size_t offset = rank - in_shape.size();
  int64_t stride = 1;
  for (size_t i = in_shape.size(); i-- > 0;) {
    strides[offset + i] = in_shape[i] == 1 ? 0 : stride;
    stride *= in_shape[i];
  }
  return strides;
}

void ForEachBroadcastRun(const Shape& out_shape, const std::vector<Shape>& in_shapes,
                         const std::function<void(const BroadcastRun&)>& fn) {
  const size_t n_in = in_shapes.size();
  ONYX_CHECK(n_in >= 1 && n_in <= 3, kInvalidArgument, "ForEachBroadcastRun takes 1 to 3 inputs");
  const int64_t total = ShapeSize(out_shape);
  if (total == 0) return;
  // Merge dimensions: consecutive dims can merge when every input is either contiguous
  // across both or broadcast across both.
  std::vector<std::vector<int64_t>> strides;
  for (const auto& s : in_shapes) strides.push_back(BroadcastStrides(s, out_shape));
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> mstrides(n_in);
  for (size_t d = 0; d < out_shape.size(); ++d) {
    if (out_shape[d] == 1) continue;
    bool merge = !dims.empty();
    for (size_t k = 0; k < n_in && merge; ++k) {
      const int64_t prev = mstrides[k].back();
      const int64_t cur = strides[k][d];
      merge = (prev == 0 && cur == 0) || (cur != 0 && prev == cur * out_shape[d]);
    }
    if (merge) {
      dims.back() *= out_shape[d];
      for (size_t k = 0; k < n_in; ++k) mstrides[k].back() = strides[k][d];
    } else {
      dims.push_back(out_shape[d]);
      for (size_t k = 0; k < n_in; ++k) mstrides[k].push_back(strides[k][d]);
    }
  }
  if (dims.empty()) {  // a single element
    BroadcastRun run;
    run.count = 1;
    fn(run);
    return;
  }
  const size_t r = dims.size();
  const int64_t inner = dims[r - 1];
  BroadcastRun run;
  run.count = inner;
  for (size_t k = 0; k < n_in; ++k) run.step[k] = mstrides[k][r - 1] == 0 ? 0 : 1;
  // Inner strides are 0 or 1 only when the merged inner stride is 1 for contiguous inputs.
  bool unit = true;
  for (size_t k = 0; k < n_in; ++k) unit = unit && (mstrides[k][r - 1] == 0 || mstrides[k][r - 1] == 1);
  std::vector<int64_t> idx(r, 0);
  if (!unit) {
    // Cannot happen for row-major inputs; kept as a guard.
    ONYX_THROW(kRuntime, "internal: non-unit inner stride in broadcast");
  }
  const int64_t outer = total / inner;
  int64_t in_off[3] = {0, 0, 0};
  for (int64_t o = 0; o < outer; ++o) {
    run.out = o * inner;
    for (size_t k = 0; k < n_in; ++k) run.in[k] = in_off[k];
    fn(run);
    // Advance the outer index (dims 0..r-2) like an odometer.
    for (size_t d = r - 1; d-- > 0;) {
      ++idx[d];
      for (size_t k = 0; k < n_in; ++k) in_off[k] += mstrides[k][d];
      if (idx[d] < dims[d]) break;
      for (size_t k = 0; k < n_in; ++k) in_off[k] -= mstrides[k][d] * dims[d];
      idx[d] = 0;
    }
  }
}

int64_t NormalizeAxis(int64_t axis, int64_t rank) {
  ONYX_CHECK(axis >= -rank && axis < std::max<int64_t>(rank, 1), kRuntime, "axis ", axis, " is out of range for rank ",
             rank);
  return axis < 0 ? axis + rank : axis;
}

}  // namespace onyx
