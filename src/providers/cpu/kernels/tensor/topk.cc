// TopK: the k largest (or smallest) elements along an axis and their indices. Equal values keep
// the lower index first; NaN counts as larger than every number (numpy's sort order). k comes
// from an attribute before opset 10 and an input after; largest/sorted exist from opset 11.
#include <algorithm>
#include <cmath>

#include "platform/thread_pool.h"
#include "providers/cpu/kernels/tensor/tensor_util.h"

namespace onyx {
namespace tensor_kernels {
namespace {

template <typename C>
inline bool IsNan(C v) {
  if constexpr (std::is_floating_point_v<C>) return std::isnan(v);
  else return false;
}

// Strict "a comes before b" for values a, b at indices ia, ib.
template <typename C>
inline bool Before(C a, int64_t ia, C b, int64_t ib, bool largest) {
  const bool na = IsNan(a), nb = IsNan(b);
  if (na || nb) {
    if (na && nb) return ia < ib;
    return largest ? na : nb;  // NaN is the largest
  }
  if (a != b) return largest ? a > b : a < b;
  return ia < ib;
}

class TopK final : public OpKernel {
 public:
  explicit TopK(const KernelInfo& info) : opset_(info.opset()), axis_(info.GetIntOr("axis", -1)) {
    if (opset_ < 10) k_ = info.GetInt("k");
    if (opset_ >= 11) {
      // sorted=0 leaves the order unspecified, so the sorted order serves both.
      largest_ = info.GetIntOr("largest", 1) != 0;
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const auto r = static_cast<int64_t>(x.rank());
    if (r == 0) ctx.Fail("input must have rank 1 or more");
    const auto axis = static_cast<size_t>(NormalizeAxisOrFail(ctx, axis_, r, "axis"));
    const int64_t k = opset_ < 10 ? k_ : ReadScalarInt(ctx, ctx.required_input(1), "K");
    const int64_t dim = x.dim(axis);
    if (k < 0 || k > dim) ctx.Fail(StrCat("k ", k, " is outside [0, ", dim, "] (the axis size)"));
    Shape out_shape = x.shape();
    out_shape[axis] = k;
    Tensor& values = ctx.AllocateOutput(0, x.dtype(), out_shape);
    Tensor& indices = ctx.AllocateOutput(1, DataType::kInt64, out_shape);
    if (values.size() == 0) return;
    const int64_t outer = Product(x.shape(), 0, axis);
    const int64_t inner = Product(x.shape(), axis + 1, x.rank());
    const bool largest = largest_;
    Dispatch(NumericTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      const T* in = x.data<T>();
      T* out_v = values.data<T>();
      int64_t* out_i = indices.data<int64_t>();
      const double cost = static_cast<double>(dim) * std::log2(static_cast<double>(k) + 2.0) * 4.0;
      ThreadPool::For(ctx.thread_pool(), outer * inner, cost, [&](int64_t begin, int64_t end) {
        std::vector<std::pair<C, int64_t>> row(static_cast<size_t>(dim));
        auto before = [largest](const std::pair<C, int64_t>& a, const std::pair<C, int64_t>& b) {
          return Before(a.first, a.second, b.first, b.second, largest);
        };
        for (int64_t s = begin; s < end; ++s) {
          const int64_t o = s / inner, i = s % inner;
          const T* src = in + o * dim * inner + i;
          for (int64_t j = 0; j < dim; ++j) row[static_cast<size_t>(j)] = {ToCompute(src[j * inner]), j};
          if (k < dim) std::partial_sort(row.begin(), row.begin() + k, row.end(), before);
          else std::sort(row.begin(), row.end(), before);
          T* dv = out_v + o * k * inner + i;
          int64_t* di = out_i + o * k * inner + i;
          for (int64_t j = 0; j < k; ++j) {
            dv[j * inner] = FromCompute<T>(row[static_cast<size_t>(j)].first);
            di[j * inner] = row[static_cast<size_t>(j)].second;
          }
        }
      });
    });
  }

 private:
  int opset_;
  int64_t axis_;
  int64_t k_ = 0;
  bool largest_ = true;
};

ONYX_CPU_KERNEL("TopK", 1, 9, TopK);    // k attribute
ONYX_CPU_KERNEL("TopK", 10, 10, TopK);  // K input
ONYX_CPU_KERNEL("TopK", 11, kOpsetMax, TopK);  // + largest / sorted, negative axis

}  // namespace
}  // namespace tensor_kernels
}  // namespace onyx
