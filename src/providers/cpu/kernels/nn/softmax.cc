// Softmax, LogSoftmax and Hardmax. Opsets < 13 coerce the input to 2-D at `axis` (default 1)
// and normalize each row of the flattened trailing dims; opset 13+ normalizes along the single
// `axis` (default -1). Both views reduce to [outer, n, inner] blocks. Float Softmax and
// LogSoftmax run linalg's fused row kernels.
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "base/type_traits.h"
#include "linalg/vector_math.h"
#include "ops/broadcast.h"
#include "platform/thread_pool.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kHardmax };

template <SoftmaxKind kind>
class SoftmaxFamily final : public OpKernel {
 public:
  explicit SoftmaxFamily(const KernelInfo& info)
      : coerce_2d_(info.opset() < 13), axis_(info.GetIntOr("axis", info.opset() < 13 ? 1 : -1)) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const int64_t rank = static_cast<int64_t>(x.rank());
    if (rank == 0) ctx.Fail("input must have rank >= 1");
    const Shape& s = x.shape();
    int64_t outer = 1, n = 1, inner = 1;
    if (coerce_2d_) {
      // axis == rank is accepted: every row is a single element.
      const int64_t axis = axis_ == rank ? rank : NormalizeAxis(axis_, rank);
      for (int64_t d = 0; d < axis; ++d) outer *= s[d];
      for (int64_t d = axis; d < rank; ++d) n *= s[d];
    } else {
      const int64_t axis = NormalizeAxis(axis_, rank);
      for (int64_t d = 0; d < axis; ++d) outer *= s[d];
      n = s[axis];
      for (int64_t d = axis + 1; d < rank; ++d) inner *= s[d];
    }
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), s);
    if (y.size() == 0) return;
    Dispatch(FloatTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      if constexpr (std::is_same_v<T, float> && kind != SoftmaxKind::kHardmax) {
        VectorBlocks(ctx.thread_pool(), xp, yp, outer, n, inner);
        return;
      }
      ThreadPool::For(ctx.thread_pool(), outer, 8.0 * static_cast<double>(n * inner), [&](int64_t begin, int64_t end) {
        Scratch<T> scratch(inner);
        for (int64_t o = begin; o < end; ++o) Block<T>(xp + o * n * inner, yp + o * n * inner, n, inner, scratch);
      });
    });
  }

 private:
  // Float blocks through linalg: contiguous rows (inner == 1) or [n, inner] column blocks.
  static void VectorBlocks(ThreadPool* pool, const float* x, float* y, int64_t outer, int64_t n, int64_t inner) {
    const size_t rows = static_cast<size_t>(n), cols = static_cast<size_t>(inner);
    ThreadPool::For(pool, outer, 4.0 * static_cast<double>(n * inner), [&](int64_t begin, int64_t end) {
      std::vector<float> scratch(inner > 1 ? 2 * cols : 0);
      for (int64_t o = begin; o < end; ++o) {
        const float* xb = x + o * n * inner;
        float* yb = y + o * n * inner;
        if (inner == 1) {
          if constexpr (kind == SoftmaxKind::kSoftmax)
            linalg::SoftmaxRow(xb, yb, rows);
          else
            linalg::LogSoftmaxRow(xb, yb, rows);
        } else {
          if constexpr (kind == SoftmaxKind::kSoftmax)
            linalg::SoftmaxColumns(xb, yb, rows, cols, scratch.data());
          else
            linalg::LogSoftmaxColumns(xb, yb, rows, cols, scratch.data());
        }
      }
    });
  }

  template <typename T>
  using AccOf = std::conditional_t<std::is_same_v<T, double>, double, float>;

  // Per-column running max (and its position) and sum, reused across blocks.
  template <typename T>
  struct Scratch {
    explicit Scratch(int64_t inner)
        : mx(static_cast<size_t>(inner)), sum(static_cast<size_t>(inner)), arg(static_cast<size_t>(inner)) {}
    std::vector<AccOf<T>> mx, sum;
    std::vector<int64_t> arg;
  };

  // One [n, inner] block, normalized along n for every inner column.
  template <typename T>
  static void Block(const T* x, T* y, int64_t n, int64_t inner, Scratch<T>& scratch) {
    using Acc = AccOf<T>;
    if (inner == 1) {
      Row<T, Acc>(x, y, n);
      return;
    }
    Acc* mx = scratch.mx.data();
    Acc* sum = scratch.sum.data();
    int64_t* arg = scratch.arg.data();
    for (int64_t j = 0; j < inner; ++j) {
      mx[j] = static_cast<Acc>(ToCompute(x[j]));
      arg[j] = 0;
      sum[j] = 0;
    }
    for (int64_t i = 1; i < n; ++i) {
      const T* row = x + i * inner;
      for (int64_t j = 0; j < inner; ++j) {
        const Acc v = static_cast<Acc>(ToCompute(row[j]));
        if (v > mx[j]) {
          mx[j] = v;
          arg[j] = i;
        }
      }
    }
    if constexpr (kind == SoftmaxKind::kHardmax) {
      // The first maximal element along the axis is 1, the rest 0.
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < inner; ++j) y[i * inner + j] = FromCompute<T>(static_cast<Acc>(arg[j] == i ? 1 : 0));
    } else if constexpr (kind == SoftmaxKind::kSoftmax && std::is_same_v<T, Acc>) {
      // exp once, into y, then scale.
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < inner; ++j) sum[j] += (y[i * inner + j] = std::exp(x[i * inner + j] - mx[j]));
      for (int64_t j = 0; j < inner; ++j) sum[j] = Acc{1} / sum[j];
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < inner; ++j) y[i * inner + j] *= sum[j];
    } else {
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < inner; ++j) sum[j] += std::exp(static_cast<Acc>(ToCompute(x[i * inner + j])) - mx[j]);
      for (int64_t j = 0; j < inner; ++j)
        sum[j] = kind == SoftmaxKind::kSoftmax ? Acc{1} / sum[j] : mx[j] + std::log(sum[j]);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < inner; ++j) {
          const Acc v = static_cast<Acc>(ToCompute(x[i * inner + j]));
          y[i * inner + j] = FromCompute<T>(kind == SoftmaxKind::kSoftmax ? std::exp(v - mx[j]) * sum[j] : v - sum[j]);
        }
    }
  }

  // A contiguous row (inner == 1), without scratch vectors.
  template <typename T, typename Acc>
  static void Row(const T* x, T* y, int64_t n) {
    Acc mx = static_cast<Acc>(ToCompute(x[0]));
    int64_t arg = 0;
    for (int64_t i = 1; i < n; ++i) {
      const Acc v = static_cast<Acc>(ToCompute(x[i]));
      if (v > mx) {
        mx = v;
        arg = i;
      }
    }
    if constexpr (kind == SoftmaxKind::kHardmax) {
      for (int64_t i = 0; i < n; ++i) y[i] = FromCompute<T>(static_cast<Acc>(i == arg ? 1 : 0));
    } else if constexpr (kind == SoftmaxKind::kSoftmax && std::is_same_v<T, Acc>) {
      Acc sum = 0;
      for (int64_t i = 0; i < n; ++i) sum += (y[i] = std::exp(x[i] - mx));
      const Acc inv = Acc{1} / sum;
      for (int64_t i = 0; i < n; ++i) y[i] *= inv;
    } else {
      Acc sum = 0;
      for (int64_t i = 0; i < n; ++i) sum += std::exp(static_cast<Acc>(ToCompute(x[i])) - mx);
      const Acc scale = kind == SoftmaxKind::kSoftmax ? Acc{1} / sum : mx + std::log(sum);
      for (int64_t i = 0; i < n; ++i) {
        const Acc v = static_cast<Acc>(ToCompute(x[i]));
        y[i] = FromCompute<T>(kind == SoftmaxKind::kSoftmax ? std::exp(v - mx) * scale : v - scale);
      }
    }
  }

  bool coerce_2d_;
  int64_t axis_;
};

using Softmax = SoftmaxFamily<SoftmaxKind::kSoftmax>;
using LogSoftmax = SoftmaxFamily<SoftmaxKind::kLogSoftmax>;
using Hardmax = SoftmaxFamily<SoftmaxKind::kHardmax>;

ONYX_CPU_KERNEL("Softmax", 1, 10, Softmax);
ONYX_CPU_KERNEL("Softmax", 11, 12, Softmax);
ONYX_CPU_KERNEL("Softmax", 13, kOpsetMax, Softmax);
ONYX_CPU_KERNEL("LogSoftmax", 1, 10, LogSoftmax);
ONYX_CPU_KERNEL("LogSoftmax", 11, 12, LogSoftmax);
ONYX_CPU_KERNEL("LogSoftmax", 13, kOpsetMax, LogSoftmax);
ONYX_CPU_KERNEL("Hardmax", 1, 10, Hardmax);
ONYX_CPU_KERNEL("Hardmax", 11, 12, Hardmax);
ONYX_CPU_KERNEL("Hardmax", 13, kOpsetMax, Hardmax);

}  // namespace
}  // namespace onyx
