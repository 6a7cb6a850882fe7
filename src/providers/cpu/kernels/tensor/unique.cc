// Unique: the distinct elements (or, with axis, the distinct slices along it), sorted or in
// order of first occurrence, with the first-occurrence indices, the inverse mapping and the
// counts. A stable sort keeps equal keys in input order, so a group's first member is its first
// occurrence. NaNs compare equal to each other and above every number.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "providers/cpu/kernels/tensor/tensor_util.h"

namespace onyx {
namespace tensor_kernels {
namespace {

template <typename C>
inline int Compare(const C& a, const C& b) {
  if constexpr (std::is_floating_point_v<C>) {
    const bool na = std::isnan(a), nb = std::isnan(b);
    if (na || nb) return na == nb ? 0 : (na ? 1 : -1);
  }
  return a < b ? -1 : (b < a ? 1 : 0);
}

class Unique final : public OpKernel {
 public:
  explicit Unique(const KernelInfo& info)
      : sorted_(info.GetIntOr("sorted", 1) != 0), has_axis_(info.HasAttr("axis")), axis_(info.GetIntOr("axis", 0)) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    size_t axis = 0;
    Shape shape = {x.size()};
    if (has_axis_) {
      axis = static_cast<size_t>(NormalizeAxisOrFail(ctx, axis_, static_cast<int64_t>(x.rank()), "axis"));
      shape = x.shape();
    }
    const int64_t outer = Product(shape, 0, axis);
    const int64_t m = shape[axis];
    const int64_t inner = Product(shape, axis + 1, shape.size());
    Dispatch(AllTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      const T* p = x.data<T>();
      auto slice_compare = [&](int64_t a, int64_t b) {
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t i = 0; i < inner; ++i) {
            const int64_t base = o * m * inner + i;
            const int c = Compare<C>(ToCompute(p[base + a * inner]), ToCompute(p[base + b * inner]));
            if (c != 0) return c;
          }
        return 0;
      };
      std::vector<int64_t> order(static_cast<size_t>(m));
      std::iota(order.begin(), order.end(), int64_t{0});
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return slice_compare(a, b) < 0; });
      // Groups of equal slices: first occurrence and count, in sorted order.
      std::vector<int64_t> first, count, group_of(static_cast<size_t>(m));
      for (size_t j = 0; j < order.size(); ++j) {
        if (j == 0 || slice_compare(order[j - 1], order[j]) != 0) {
          first.push_back(order[j]);
          count.push_back(0);
        }
        ++count.back();
        group_of[static_cast<size_t>(order[j])] = static_cast<int64_t>(first.size()) - 1;
      }
      const auto u = static_cast<int64_t>(first.size());
      // Output position of each group.
      std::vector<int64_t> rank(static_cast<size_t>(u));
      std::iota(rank.begin(), rank.end(), int64_t{0});
      if (!sorted_) {
        std::vector<int64_t> by_first(static_cast<size_t>(u));
        std::iota(by_first.begin(), by_first.end(), int64_t{0});
        std::sort(by_first.begin(), by_first.end(), [&](int64_t a, int64_t b) { return first[static_cast<size_t>(a)] < first[static_cast<size_t>(b)]; });
        for (int64_t pos = 0; pos < u; ++pos) rank[static_cast<size_t>(by_first[static_cast<size_t>(pos)])] = pos;
      }
      Shape y_shape = shape;
      y_shape[axis] = u;
      Tensor& y = ctx.AllocateOutput(0, x.dtype(), y_shape);
      Tensor& indices = ctx.AllocateOutput(1, DataType::kInt64, {u});
      Tensor& inverse = ctx.AllocateOutput(2, DataType::kInt64, {m});
      Tensor& counts = ctx.AllocateOutput(3, DataType::kInt64, {u});
      T* py = y.data<T>();
      for (int64_t g = 0; g < u; ++g) {
        const int64_t pos = rank[static_cast<size_t>(g)];
        const int64_t src = first[static_cast<size_t>(g)];
        indices.data<int64_t>()[pos] = src;
        counts.data<int64_t>()[pos] = count[static_cast<size_t>(g)];
        for (int64_t o = 0; o < outer; ++o)
          CopyN(py + (o * u + pos) * inner, p + (o * m + src) * inner, inner);
      }
      for (int64_t j = 0; j < m; ++j)
        inverse.data<int64_t>()[j] = rank[static_cast<size_t>(group_of[static_cast<size_t>(j)])];
    });
  }

 private:
  bool sorted_;
  bool has_axis_;
  int64_t axis_;
};

ONYX_CPU_KERNEL("Unique", 11, kOpsetMax, Unique);

}  // namespace
}  // namespace tensor_kernels
}  // namespace onyx
