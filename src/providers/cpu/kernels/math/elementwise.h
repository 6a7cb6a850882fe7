// Loops shared by the elementwise kernels (math/ and activation/): a threaded map over
// contiguous elements, a threaded walk over numpy-broadcast inputs in runs where each input
// either advances or stays put, opset < 7 `broadcast`/`axis` shapes, and integer helpers with
// numpy's wrap-around semantics (signed overflow is undefined behaviour in C++).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "base/type_traits.h"
#include "linalg/vector_math.h"
#include "ops/broadcast.h"
#include "platform/thread_pool.h"
#include "providers/kernel.h"

namespace onyx::elementwise {

// Rough cycle counts per element, for the thread pool's cost model.
inline constexpr double kCheapCost = 1.0;
inline constexpr double kTranscendentalCost = 20.0;
inline constexpr double kVecTranscendentalCost = 3.0;  // the same through linalg's vector math
inline constexpr double kVecCheapCost = 0.5;

template <typename T>
inline constexpr bool kIsFloatOrHalf =
    std::is_same_v<T, float> || std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

// y[i] = f(x[i]) for i in [0, n), split across the pool when the work is large.
template <typename In, typename Out, typename F>
void Map(ThreadPool* pool, const In* x, Out* y, int64_t n, double cost, F f) {
  if (n <= 0) return;
  ThreadPool::For(pool, n, cost, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = f(x[i]);
  });
}

// y = f(x) for a vectorized f(const float* x, float* y, size_t n) (linalg's vector math),
// split across the pool. Float16 / BFloat16 pass through a float buffer in chunks: computed in
// float, rounded once. f must accept y == x.
template <typename T, typename F>
void VecMap(ThreadPool* pool, const T* x, T* y, int64_t n, double cost, F f) {
  static_assert(kIsFloatOrHalf<T>);
  if (n <= 0) return;
  ThreadPool::For(pool, n, cost, [&](int64_t begin, int64_t end) {
    if constexpr (std::is_same_v<T, float>) {
      f(x + begin, y + begin, static_cast<size_t>(end - begin));
    } else {
      constexpr int64_t kChunk = 1024;
      float buffer[kChunk];
      for (int64_t i = begin; i < end; i += kChunk) {
        const int64_t m = std::min(kChunk, end - i);
        for (int64_t k = 0; k < m; ++k) buffer[k] = ToCompute(x[i + k]);
        f(buffer, buffer, static_cast<size_t>(m));
        for (int64_t k = 0; k < m; ++k) y[i + k] = FromCompute<T>(buffer[k]);
      }
    }
  });
}

// The output walk for 1 to 3 inputs broadcast to one output shape. Dimensions are merged where
// every input is either contiguous or broadcast across them, so the common cases (same shapes,
// a scalar operand, a bias along the last axis) become one or a few long runs.
class BroadcastPlan {
 public:
  // The caller has checked that every in_shape broadcasts to out_shape.
  BroadcastPlan(const Shape& out_shape, const std::vector<Shape>& in_shapes) : n_in_(in_shapes.size()) {
    total_ = ShapeSize(out_shape);
    std::vector<std::vector<int64_t>> strides;
    for (const Shape& s : in_shapes) strides.push_back(BroadcastStrides(s, out_shape));
    std::vector<int64_t> dims;
    std::vector<std::array<int64_t, 3>> dim_strides;
    for (size_t d = 0; d < out_shape.size(); ++d) {
      if (out_shape[d] == 1) continue;
      bool merge = !dims.empty();
      for (size_t k = 0; k < n_in_ && merge; ++k) {
        const int64_t prev = dim_strides.back()[k];
        const int64_t cur = strides[k][d];
        merge = (prev == 0 && cur == 0) || (cur != 0 && prev == cur * out_shape[d]);
      }
      if (merge) {
        dims.back() *= out_shape[d];
        for (size_t k = 0; k < n_in_; ++k) dim_strides.back()[k] = strides[k][d];
      } else {
        dims.push_back(out_shape[d]);
        std::array<int64_t, 3> s{0, 0, 0};
        for (size_t k = 0; k < n_in_; ++k) s[k] = strides[k][d];
        dim_strides.push_back(s);
      }
    }
    if (dims.empty()) return;  // zero or one element: inner_ = 1, no outer dims
    // Row-major inputs leave the innermost merged stride at 0 (broadcast) or 1 (contiguous).
    inner_ = dims.back();
    for (size_t k = 0; k < n_in_; ++k) advance_[k] = dim_strides.back()[k] != 0;
    dims.pop_back();
    dim_strides.pop_back();
    outer_dims_ = std::move(dims);
    outer_strides_ = std::move(dim_strides);
  }

  int64_t size() const { return total_; }

  // fn(out_offset, const int64_t* in_offsets, const bool* advances, count) for every run;
  // runs go to the pool in pieces of at most kPiece elements.
  template <typename Fn>
  void Run(ThreadPool* pool, double cost_per_element, Fn&& fn) const {
    if (total_ <= 0) return;
    const int64_t pieces = (inner_ + kPiece - 1) / kPiece;
    const int64_t outer = total_ / inner_;
    const int64_t items = outer * pieces;
    const double cost = cost_per_element * static_cast<double>(std::min(inner_, kPiece));
    ThreadPool::For(pool, items, cost, [&](int64_t begin, int64_t end) {
      int64_t o = begin / pieces;
      int64_t p = begin % pieces;
      // Decompose the outer index o into per-dimension indices and input offsets.
      const size_t r = outer_dims_.size();
      std::vector<int64_t> idx(r, 0);
      std::array<int64_t, 3> base{0, 0, 0};
      int64_t rem = o;
      for (size_t d = r; d-- > 0;) {
        idx[d] = rem % outer_dims_[d];
        rem /= outer_dims_[d];
        for (size_t k = 0; k < n_in_; ++k) base[k] += idx[d] * outer_strides_[d][k];
      }
      for (int64_t item = begin; item < end; ++item) {
        const int64_t start = p * kPiece;
        const int64_t count = std::min(kPiece, inner_ - start);
        int64_t in[3];
        for (size_t k = 0; k < 3; ++k) in[k] = base[k] + (advance_[k] ? start : 0);
        fn(o * inner_ + start, static_cast<const int64_t*>(in), advance_.data(), count);
        if (++p < pieces) continue;
        p = 0;
        ++o;
        for (size_t d = r; d-- > 0;) {  // odometer over the outer dims
          ++idx[d];
          for (size_t k = 0; k < n_in_; ++k) base[k] += outer_strides_[d][k];
          if (idx[d] < outer_dims_[d]) break;
          for (size_t k = 0; k < n_in_; ++k) base[k] -= outer_strides_[d][k] * outer_dims_[d];
          idx[d] = 0;
        }
      }
    });
  }

 private:
  static constexpr int64_t kPiece = 16384;
  size_t n_in_;
  int64_t total_ = 0;
  int64_t inner_ = 1;
  std::array<bool, 3> advance_{false, false, false};
  std::vector<int64_t> outer_dims_;
  std::vector<std::array<int64_t, 3>> outer_strides_;
};

// out[i] = f(a[i], b[i]) over broadcast shapes, with contiguous fast paths for the common run
// kinds (both advance, one operand fixed) so the compiler can vectorize them.
// How two operands meet the output when no broadcast walk is needed: both laid out as the
// output (kSame), or one a single element and the other laid out as the output. An operand that
// broadcasts to the output with as many elements differs from it by 1s only ([16] and [1, 16]),
// so the element counts decide. The caller has checked that both broadcast to out_shape.
enum class SimpleOperands { kSame, kScalarA, kScalarB, kOther };

inline SimpleOperands ClassifyOperands(const Shape& out_shape, const Shape& a_shape, const Shape& b_shape) {
  const int64_t n = ShapeSize(out_shape), na = ShapeSize(a_shape), nb = ShapeSize(b_shape);
  if (na == n && nb == n) return SimpleOperands::kSame;
  if (na == n && nb == 1) return SimpleOperands::kScalarB;
  if (nb == n && na == 1) return SimpleOperands::kScalarA;
  return SimpleOperands::kOther;
}

template <typename TA, typename TB, typename TO, typename F>
void BinaryLoop(ThreadPool* pool, const Shape& out_shape, const TA* pa, const Shape& a_shape, const TB* pb,
                const Shape& b_shape, TO* po, double cost, F f) {
  // The common cases go straight to the pool: building the broadcast plan costs more than a
  // small tensor's arithmetic (per-node overhead of models of many small ops).
  switch (ClassifyOperands(out_shape, a_shape, b_shape)) {
    case SimpleOperands::kSame:
      ThreadPool::For(pool, ShapeSize(out_shape), cost, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) po[i] = f(pa[i], pb[i]);
      });
      return;
    case SimpleOperands::kScalarB: {
      const TB bv = pb[0];
      ThreadPool::For(pool, ShapeSize(out_shape), cost, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) po[i] = f(pa[i], bv);
      });
      return;
    }
    case SimpleOperands::kScalarA: {
      const TA av = pa[0];
      ThreadPool::For(pool, ShapeSize(out_shape), cost, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) po[i] = f(av, pb[i]);
      });
      return;
    }
    case SimpleOperands::kOther:
      break;
  }
  BroadcastPlan plan(out_shape, {a_shape, b_shape});
  plan.Run(pool, cost, [&](int64_t o, const int64_t* in, const bool* adv, int64_t n) {
    const TA* ra = pa + in[0];
    const TB* rb = pb + in[1];
    TO* ro = po + o;
    if (adv[0] && adv[1]) {
      for (int64_t i = 0; i < n; ++i) ro[i] = f(ra[i], rb[i]);
    } else if (adv[0]) {
      const TB bv = rb[0];
      for (int64_t i = 0; i < n; ++i) ro[i] = f(ra[i], bv);
    } else if (adv[1]) {
      const TA av = ra[0];
      for (int64_t i = 0; i < n; ++i) ro[i] = f(av, rb[i]);
    } else {
      const TO v = f(ra[0], rb[0]);
      std::fill(ro, ro + n, v);
    }
  });
}

// out = a op b for float tensors over broadcast shapes through linalg's vector arithmetic:
// same-shape runs, a scalar on either side, and bias rows (each row one same-shape run). Runs
// too short to repay a call stay inline.
inline void VecBinaryLoop(ThreadPool* pool, const Shape& out_shape, const float* pa, const Shape& a_shape,
                          const float* pb, const Shape& b_shape, float* po, linalg::BinaryOp op) {
  constexpr int64_t kShortRun = 8;
  auto scalar = [op](float x, float y) {
    switch (op) {
      case linalg::BinaryOp::kAdd:
        return x + y;
      case linalg::BinaryOp::kSub:
        return x - y;
      case linalg::BinaryOp::kMul:
        return x * y;
      case linalg::BinaryOp::kDiv:
        return x / y;
      case linalg::BinaryOp::kMax:
        return x != x || y != y ? x + y : (x > y ? x : y);
      case linalg::BinaryOp::kMin:
        return x != x || y != y ? x + y : (x < y ? x : y);
    }
    return x;
  };
  switch (ClassifyOperands(out_shape, a_shape, b_shape)) {  // no broadcast walk (see BinaryLoop)
    case SimpleOperands::kSame:
      ThreadPool::For(pool, ShapeSize(out_shape), kVecCheapCost, [&](int64_t begin, int64_t end) {
        if (end - begin >= kShortRun)
          return linalg::VecBinary(op, pa + begin, pb + begin, po + begin, static_cast<size_t>(end - begin));
        for (int64_t i = begin; i < end; ++i) po[i] = scalar(pa[i], pb[i]);
      });
      return;
    case SimpleOperands::kScalarB:
      ThreadPool::For(pool, ShapeSize(out_shape), kVecCheapCost, [&](int64_t begin, int64_t end) {
        if (end - begin >= kShortRun)
          return linalg::VecBinaryScalar(op, pa + begin, pb[0], po + begin, static_cast<size_t>(end - begin));
        for (int64_t i = begin; i < end; ++i) po[i] = scalar(pa[i], pb[0]);
      });
      return;
    case SimpleOperands::kScalarA:
      ThreadPool::For(pool, ShapeSize(out_shape), kVecCheapCost, [&](int64_t begin, int64_t end) {
        if (end - begin >= kShortRun)
          return linalg::VecScalarBinary(op, pa[0], pb + begin, po + begin, static_cast<size_t>(end - begin));
        for (int64_t i = begin; i < end; ++i) po[i] = scalar(pa[0], pb[i]);
      });
      return;
    case SimpleOperands::kOther:
      break;
  }
  BroadcastPlan plan(out_shape, {a_shape, b_shape});
  plan.Run(pool, kVecCheapCost, [&](int64_t o, const int64_t* in, const bool* adv, int64_t n) {
    const float* ra = pa + in[0];
    const float* rb = pb + in[1];
    float* ro = po + o;
    const size_t count = static_cast<size_t>(n);
    if (adv[0] && adv[1]) {
      if (n >= kShortRun) return linalg::VecBinary(op, ra, rb, ro, count);
      for (int64_t i = 0; i < n; ++i) ro[i] = scalar(ra[i], rb[i]);
    } else if (adv[0]) {
      if (n >= kShortRun) return linalg::VecBinaryScalar(op, ra, rb[0], ro, count);
      for (int64_t i = 0; i < n; ++i) ro[i] = scalar(ra[i], rb[0]);
    } else if (adv[1]) {
      if (n >= kShortRun) return linalg::VecScalarBinary(op, ra[0], rb, ro, count);
      for (int64_t i = 0; i < n; ++i) ro[i] = scalar(ra[0], rb[i]);
    } else {
      std::fill(ro, ro + n, scalar(ra[0], rb[0]));
    }
  });
}

// out[i] = f(a[i], b[i], c[i]) over broadcast shapes (Where, Clip-like ternaries).
template <typename TA, typename TB, typename TC, typename TO, typename F>
void TernaryLoop(ThreadPool* pool, const Shape& out_shape, const TA* pa, const Shape& a_shape, const TB* pb,
                 const Shape& b_shape, const TC* pc, const Shape& c_shape, TO* po, double cost, F f) {
  BroadcastPlan plan(out_shape, {a_shape, b_shape, c_shape});
  plan.Run(pool, cost, [&](int64_t o, const int64_t* in, const bool* adv, int64_t n) {
    const TA* ra = pa + in[0];
    const TB* rb = pb + in[1];
    const TC* rc = pc + in[2];
    TO* ro = po + o;
    if (adv[0] && adv[1] && adv[2]) {
      for (int64_t i = 0; i < n; ++i) ro[i] = f(ra[i], rb[i], rc[i]);
    } else {
      const int64_t sa = adv[0], sb = adv[1], sc = adv[2];
      for (int64_t i = 0; i < n; ++i) ro[i] = f(ra[i * sa], rb[i * sb], rc[i * sc]);
    }
  });
}

// Shapes for a two-input op: numpy broadcasting from opset 7, and before it the legacy rule
// where B (with `broadcast` = 1) is broadcast onto A's shape aligned at `axis` (or at the end).
struct BinaryShapes {
  Shape out, a, b;
};

struct LegacyBroadcast {
  bool legacy = false;  // opset < 7
  bool broadcast = false;
  std::optional<int64_t> axis;

  static LegacyBroadcast FromInfo(const KernelInfo& info) {
    LegacyBroadcast l;
    if (info.opset() >= 7) return l;
    l.legacy = true;
    l.broadcast = info.GetIntOr("broadcast", 0) != 0;
    if (info.HasAttr("axis")) l.axis = info.GetInt("axis");
    return l;
  }
};

inline BinaryShapes ResolveBinaryShapes(const KernelContext& ctx, const Shape& a, const Shape& b,
                                        const LegacyBroadcast& legacy) {
  if (!legacy.legacy) {
    if (a == b) return {a, a, b};  // no broadcast to resolve
    try {
      const Shape out = BroadcastShapes(a, b);
      return {out, a, b};
    } catch (const Error& e) {
      ctx.Fail(e.what());
    }
  }
  if (!legacy.broadcast) {
    if (a != b) ctx.Fail("inputs must have the same shape when the 'broadcast' attribute is 0");
    return {a, a, b};
  }
  const int64_t ra = static_cast<int64_t>(a.size());
  const int64_t rb = static_cast<int64_t>(b.size());
  if (rb > ra) ctx.Fail("with 'broadcast' = 1, input B cannot have a higher rank than input A");
  int64_t axis = legacy.axis.value_or(ra - rb);
  if (axis < 0) axis += ra;
  if (axis < 0 || axis + rb > ra) ctx.Fail(StrCat("axis ", legacy.axis.value_or(0), " does not fit B into A"));
  Shape padded(static_cast<size_t>(ra), 1);
  for (int64_t i = 0; i < rb; ++i) {
    const int64_t d = b[static_cast<size_t>(i)];
    if (d != 1 && d != a[static_cast<size_t>(axis + i)])
      ctx.Fail(StrCat("B dimension ", i, " (", d, ") does not match A dimension ", axis + i));
    padded[static_cast<size_t>(axis + i)] = d;
  }
  return {a, a, padded};
}

// Integer arithmetic that wraps like numpy instead of invoking undefined behaviour.
template <typename T>
using Unsigned = std::make_unsigned_t<T>;

template <typename T>
inline T WrapAdd(T a, T b) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
    return static_cast<T>(static_cast<Unsigned<T>>(a) + static_cast<Unsigned<T>>(b));
  else return static_cast<T>(a + b);
}
template <typename T>
inline T WrapSub(T a, T b) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
    return static_cast<T>(static_cast<Unsigned<T>>(a) - static_cast<Unsigned<T>>(b));
  else return static_cast<T>(a - b);
}
template <typename T>
inline T WrapMul(T a, T b) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
    return static_cast<T>(static_cast<Unsigned<T>>(a) * static_cast<Unsigned<T>>(b));
  else if constexpr (std::is_integral_v<T> && sizeof(T) < sizeof(unsigned))
    return static_cast<T>(static_cast<unsigned>(a) * static_cast<unsigned>(b));  // no int promotion
  else return static_cast<T>(a * b);
}
template <typename T>
inline T WrapNeg(T a) {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(Unsigned<T>(0) - static_cast<Unsigned<T>>(a));
  else return -a;
}

// A floating value converted to an integer type without undefined behaviour: NaN gives 0 and
// values outside the range saturate.
template <typename I, typename F>
inline I SaturatingCast(F v) {
  if (std::isnan(v)) return I(0);
  if (v <= static_cast<F>(std::numeric_limits<I>::lowest())) return std::numeric_limits<I>::lowest();
  if (v >= static_cast<F>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}

}  // namespace onyx::elementwise
