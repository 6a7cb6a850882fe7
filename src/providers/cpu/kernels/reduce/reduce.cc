// ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceLogSum,
// ReduceLogSumExp, ReduceSumSquare.
//
// Axes come from the `axes` attribute before opset 13 (ReduceSum) / 18 (the others) and from the
// optional second input after. Empty axes reduce everything, unless noop_with_empty_axes is set:
// then no axis is reduced and only the per-element part of the op applies (|x| for L1, x^2 for
// SumSquare, ...), as the ONNX reference does. Reducing an empty set gives the op's identity
// (0 for sums, 1 for Prod, the lowest value for Max, -inf for LogSum, NaN for Mean).
//
// The input's dims are merged into alternating kept / reduced groups. When the innermost group is
// reduced every output is a straight loop over contiguous memory; when it is kept, whole rows are
// accumulated element-wise, so both layouts read memory in order in one pass. Float Sum, Mean,
// SumSquare, L1, L2, Max and Min run linalg's vector reductions (sums still in double).
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "base/type_traits.h"
#include "linalg/vector_math.h"
#include "platform/thread_pool.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

enum class Kind { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

// The accumulator: double for floating types and for ops that end in a transcendental; for
// integers the type's own signedness at 64 bits (Max/Min) or wrapping unsigned arithmetic
// (sums/products wrap like the element type would, without signed-overflow UB).
template <Kind K, typename T>
struct AccOf {
  static constexpr bool kFloating = !std::is_integral_v<T>;
  static constexpr bool kTranscendental = K == Kind::kL2 || K == Kind::kLogSum || K == Kind::kLogSumExp;
  static constexpr bool kOrdered = K == Kind::kMax || K == Kind::kMin;
  using type = std::conditional_t<
      kFloating || kTranscendental, double,
      std::conditional_t<kOrdered, std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>, uint64_t>>;
};

template <Kind K, typename T>
class Op {
 public:
  using A = typename AccOf<K, T>::type;
  static constexpr Kind kKind = K;
  static constexpr bool kShifted = K == Kind::kLogSumExp;

  static A Load(T v) {
    if constexpr (std::is_same_v<A, double>)
      return static_cast<double>(ToCompute(v));
    else if constexpr (std::is_same_v<A, uint64_t> && std::is_signed_v<T>)
      return static_cast<uint64_t>(static_cast<int64_t>(v));
    else
      return static_cast<A>(v);
  }

  static A Init() {
    if constexpr (K == Kind::kProd)
      return A(1);
    else if constexpr (K == Kind::kMax && std::is_same_v<A, double>)
      return -std::numeric_limits<double>::infinity();
    else if constexpr (K == Kind::kMin && std::is_same_v<A, double>)
      return std::numeric_limits<double>::infinity();
    else if constexpr (K == Kind::kMax)
      return static_cast<A>(std::numeric_limits<T>::lowest());
    else if constexpr (K == Kind::kMin)
      return static_cast<A>(std::numeric_limits<T>::max());
    else
      return A(0);
  }

  // The per-element part, applied before combining.
  static A Pre(A x, double shift) {
    if constexpr (K == Kind::kL1) {
      if constexpr (std::is_same_v<A, double>)
        return std::fabs(x);
      else if constexpr (std::is_signed_v<T>)
        return static_cast<int64_t>(x) < 0 ? A(0) - x : x;
      else
        return x;
    } else if constexpr (K == Kind::kL2 || K == Kind::kSumSquare) {
      return x * x;
    } else if constexpr (K == Kind::kLogSumExp) {
      return std::exp(x - shift);
    } else {
      return x;
    }
  }

  // Max/Min of floating types: a NaN wins and stays (as in numpy).
  static constexpr bool kTrackNan = (K == Kind::kMax || K == Kind::kMin) && std::is_same_v<A, double>;

  static A Combine(A acc, A x) {
    if constexpr (kTrackNan)
      return x != x ? x : CombineOrdered(acc, x);
    else
      return CombineOrdered(acc, x);
  }

  // Combine ignoring NaN (one branch-free select for Max/Min); callers track NaN themselves.
  static A CombineOrdered(A acc, A x) {
    if constexpr (K == Kind::kMax)
      return x > acc ? x : acc;
    else if constexpr (K == Kind::kMin)
      return x < acc ? x : acc;
    else if constexpr (K == Kind::kProd)
      return acc * x;
    else
      return acc + x;
  }

  static T Finish(A acc, int64_t count, double shift) {
    if constexpr (K == Kind::kMean) {
      if constexpr (std::is_same_v<A, double>)
        return Store(acc / static_cast<double>(count));
      else if (count == 0)
        return T(0);
      else if constexpr (std::is_signed_v<T>)
        return static_cast<T>(static_cast<int64_t>(acc) / count);
      else
        return static_cast<T>(acc / static_cast<uint64_t>(count));
    } else if constexpr (K == Kind::kL2) {
      return Store(std::sqrt(acc));
    } else if constexpr (K == Kind::kLogSum) {
      return Store(std::log(acc));
    } else if constexpr (K == Kind::kLogSumExp) {
      return Store(std::log(acc) + shift);
    } else {
      return Store(acc);
    }
  }

 private:
  static T Store(A v) {
    if constexpr (std::is_same_v<A, double>) {
      if constexpr (std::is_integral_v<T>) {
        // Casting NaN or out-of-range doubles to integers is undefined: saturate instead.
        if (std::isnan(v)) return T(0);
        if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
        if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
        return static_cast<T>(v);
      } else {
        return FromCompute<T>(static_cast<ComputeType<T>>(v));
      }
    } else {
      return static_cast<T>(v);
    }
  }
};

// The reductions linalg vectorizes for float input.
template <Kind K, typename T>
inline constexpr bool kVectorized = std::is_same_v<T, float> && K != Kind::kProd && K != Kind::kLogSum &&
                                    K != Kind::kLogSumExp;

// Folds n contiguous elements into acc, with four independent accumulators so the loop is not
// bound by the latency of one dependency chain.
template <typename O, typename T>
typename O::A FoldRun(typename O::A acc, const T* p, int64_t n, double shift) {
  using A = typename O::A;
  constexpr Kind K = O::kKind;
  if constexpr (kVectorized<K, T>) {
    const size_t count = static_cast<size_t>(n);
    if constexpr (K == Kind::kSum || K == Kind::kMean) return acc + linalg::ReduceSum(p, count);
    if constexpr (K == Kind::kL2 || K == Kind::kSumSquare) return acc + linalg::ReduceSumSquares(p, count);
    if constexpr (K == Kind::kL1) return acc + linalg::ReduceSumAbs(p, count);
    if constexpr (K == Kind::kMax) return O::Combine(acc, static_cast<double>(linalg::ReduceMax(p, count)));
    if constexpr (K == Kind::kMin) return O::Combine(acc, static_cast<double>(linalg::ReduceMin(p, count)));
  }
  A a0 = O::Init(), a1 = O::Init(), a2 = O::Init(), a3 = O::Init();
  auto step = [&](A& a, T raw) { a = O::CombineOrdered(a, O::Pre(O::Load(raw), shift)); };
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) step(a0, p[i]), step(a1, p[i + 1]), step(a2, p[i + 2]), step(a3, p[i + 3]);
  for (; i < n; ++i) step(a0, p[i]);
  if constexpr (O::kTrackNan) {
    // A separate scan keeps both loops vectorizable (a NaN test inside the max loop does not).
    int nan = 0;
    for (int64_t j = 0; j < n; ++j) {
      if constexpr (std::is_floating_point_v<T>)
        nan |= p[j] != p[j];
      else
        nan |= std::isnan(O::Load(p[j]));
    }
    if (nan) return std::numeric_limits<double>::quiet_NaN();
  }
  return O::Combine(acc, O::Combine(O::Combine(a0, a1), O::Combine(a2, a3)));
}

// Walks offsets of a set of (size, stride) dims in row-major order.
class OffsetWalker {
 public:
  OffsetWalker(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, int64_t start)
      : sizes_(sizes), strides_(strides), index_(sizes.size(), 0) {
    Reset(start);
  }
  void Reset(int64_t start) {
    offset_ = 0;
    for (size_t d = sizes_.size(); d-- > 0;) {
      index_[d] = start % sizes_[d];
      start /= sizes_[d];
      offset_ += index_[d] * strides_[d];
    }
  }
  int64_t offset() const { return offset_; }
  void Next() {
    for (size_t d = sizes_.size(); d-- > 0;) {
      offset_ += strides_[d];
      if (++index_[d] < sizes_[d]) return;
      offset_ -= strides_[d] * sizes_[d];
      index_[d] = 0;
    }
  }

 private:
  const std::vector<int64_t>& sizes_;
  const std::vector<int64_t>& strides_;
  std::vector<int64_t> index_;
  int64_t offset_ = 0;
};

// The input's dims merged into groups; the innermost group is `inner` (contiguous).
struct Plan {
  std::vector<int64_t> kept_sizes, kept_strides;        // kept groups except a kept innermost one
  std::vector<int64_t> reduced_sizes, reduced_strides;  // reduced groups except a reduced innermost one
  int64_t inner = 1;
  bool inner_reduced = false;
  int64_t reduce_count = 1;  // elements reduced into each output
};

Plan MakePlan(const Shape& shape, const std::vector<bool>& reduced) {
  std::vector<int64_t> sizes;
  std::vector<bool> flags;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!flags.empty() && flags.back() == reduced[d])
      sizes.back() *= shape[d];
    else
      sizes.push_back(shape[d]), flags.push_back(reduced[d]);
  }
  Plan plan;
  if (sizes.empty()) return plan;  // a single element
  plan.inner = sizes.back();
  plan.inner_reduced = flags.back();
  int64_t stride = plan.inner;
  for (size_t g = sizes.size() - 1; g-- > 0;) {
    auto& s = flags[g] ? plan.reduced_sizes : plan.kept_sizes;
    auto& st = flags[g] ? plan.reduced_strides : plan.kept_strides;
    s.insert(s.begin(), sizes[g]);
    st.insert(st.begin(), stride);
    stride *= sizes[g];
  }
  for (size_t g = 0; g < sizes.size(); ++g)
    if (flags[g]) plan.reduce_count *= sizes[g];
  return plan;
}

constexpr int64_t kSplitMin = int64_t{1} << 15;  // contiguous runs at least this long may be split
constexpr int64_t kColumnBlock = 1024;           // columns accumulated together when the inner axis is kept

// Few outputs, each one long contiguous run: split the runs into chunks reduced in parallel,
// then combine the chunks' partial results.
template <Kind K, typename T>
void SplitReduce(const T* x, T* y, const Plan& plan, int64_t out_size, int64_t run, int threads, ThreadPool* pool) {
  using O = Op<K, T>;
  using A = typename O::A;
  const int64_t chunk = std::max(kSplitMin / 2, (run * out_size + 2 * threads - 1) / (2 * threads));
  const int64_t chunks = (run + chunk - 1) / chunk;
  const int64_t jobs = out_size * chunks;
  auto for_chunks = [&](auto&& body) {
    ThreadPool::For(pool, jobs, static_cast<double>(chunk) * 2.0, [&](int64_t begin, int64_t end) {
      for (int64_t job = begin; job < end; ++job) {
        const int64_t o = job / chunks, c = job % chunks;
        OffsetWalker kept(plan.kept_sizes, plan.kept_strides, o);
        body(job, o, x + kept.offset() + c * chunk, std::min(chunk, run - c * chunk));
      }
    });
  };
  std::vector<double> shift(static_cast<size_t>(out_size), 0.0);
  if constexpr (O::kShifted) {
    std::vector<double> part(static_cast<size_t>(jobs));
    for_chunks([&](int64_t job, int64_t, const T* p, int64_t n) {
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t i = 0; i < n; ++i) m = std::max(m, O::Load(p[i]));
      part[job] = m;
    });
    for (int64_t o = 0; o < out_size; ++o) {
      const double m = *std::max_element(part.begin() + o * chunks, part.begin() + (o + 1) * chunks);
      shift[o] = std::isfinite(m) ? m : 0.0;
    }
  }
  std::vector<A> part(static_cast<size_t>(jobs));
  for_chunks([&](int64_t job, int64_t o, const T* p, int64_t n) { part[job] = FoldRun<O>(O::Init(), p, n, shift[o]); });
  for (int64_t o = 0; o < out_size; ++o) {
    A acc = O::Init();
    for (int64_t c = 0; c < chunks; ++c) acc = O::Combine(acc, part[o * chunks + c]);
    y[o] = O::Finish(acc, plan.reduce_count, shift[o]);
  }
}

// Float rows folded into per-column accumulators by linalg: sums straight into the double
// accumulators, Max / Min through a float row (`extremum`) that keeps NaN.
template <Kind K, typename Walker>
void AccumulateRows(const float* base, Walker& red, int64_t rows, size_t inner, double* acc,
                    std::vector<float>& extremum) {
  if constexpr (K == Kind::kMax || K == Kind::kMin) {
    std::fill(extremum.begin(), extremum.begin() + static_cast<std::ptrdiff_t>(inner),
              K == Kind::kMax ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity());
  }
  for (int64_t r = 0; r < rows; ++r, red.Next()) {
    const float* p = base + red.offset();
    if constexpr (K == Kind::kSum || K == Kind::kMean) linalg::AccumulateSum(p, acc, inner);
    if constexpr (K == Kind::kL2 || K == Kind::kSumSquare) linalg::AccumulateSumSquares(p, acc, inner);
    if constexpr (K == Kind::kL1) linalg::AccumulateSumAbs(p, acc, inner);
    if constexpr (K == Kind::kMax) linalg::AccumulateMax(p, extremum.data(), inner);
    if constexpr (K == Kind::kMin) linalg::AccumulateMin(p, extremum.data(), inner);
  }
  if constexpr (K == Kind::kMax || K == Kind::kMin)
    for (size_t i = 0; i < inner; ++i) acc[i] = static_cast<double>(extremum[i]);
}

template <Kind K, typename T>
void RunReduce(const T* x, T* y, const Plan& plan, int64_t out_size, ThreadPool* pool) {
  using O = Op<K, T>;
  using A = typename O::A;
  int64_t outer_reduced = 1;
  for (int64_t s : plan.reduced_sizes) outer_reduced *= s;

  if (plan.inner_reduced || out_size == 1) {
    // Each output is a reduction of `outer_reduced` contiguous runs of `inner` elements (or, when
    // there is one output and the innermost group is kept, of the whole input).
    const int64_t run = plan.inner_reduced ? plan.inner : plan.inner * outer_reduced;
    const int64_t runs = plan.inner_reduced ? outer_reduced : 1;
    static const std::vector<int64_t> kNone;
    const auto& rs = plan.inner_reduced ? plan.reduced_sizes : kNone;
    const auto& rst = plan.inner_reduced ? plan.reduced_strides : kNone;
    const int threads = pool ? pool->num_threads() : 1;
    if (runs == 1 && out_size < threads && run >= kSplitMin) {
      SplitReduce<K, T>(x, y, plan, out_size, run, threads, pool);
      return;
    }
    ThreadPool::For(pool, out_size, static_cast<double>(plan.reduce_count) * 2.0, [&](int64_t begin, int64_t end) {
      OffsetWalker kept(plan.kept_sizes, plan.kept_strides, begin);
      OffsetWalker red(rs, rst, 0);
      for (int64_t o = begin; o < end; ++o, kept.Next()) {
        const T* base = x + kept.offset();
        double shift = 0.0;
        if constexpr (O::kShifted) {
          double m = -std::numeric_limits<double>::infinity();
          red.Reset(0);
          for (int64_t r = 0; r < runs; ++r, red.Next())
            for (int64_t i = 0; i < run; ++i) m = std::max(m, O::Load(base[red.offset() + i]));
          shift = std::isfinite(m) ? m : 0.0;
        }
        A acc = O::Init();
        red.Reset(0);
        for (int64_t r = 0; r < runs; ++r, red.Next()) acc = FoldRun<O>(acc, base + red.offset(), run, shift);
        y[o] = O::Finish(acc, plan.reduce_count, shift);
      }
    });
    return;
  }

  // Innermost group kept: accumulate rows of `inner` elements, split into column blocks so the
  // accumulators stay in cache and a single output row still spreads over threads.
  const int64_t block = std::min<int64_t>(plan.inner, kColumnBlock);
  const int64_t blocks = (plan.inner + block - 1) / block;
  const int64_t rows = out_size / plan.inner;
  ThreadPool::For(pool, rows * blocks, static_cast<double>(plan.reduce_count * block) * 2.0,
                  [&](int64_t begin, int64_t end) {
                    std::vector<A> acc(static_cast<size_t>(block));
                    std::vector<float> extremum(kVectorized<K, T> ? static_cast<size_t>(block) : 0);
                    std::vector<double> shift(O::kShifted ? static_cast<size_t>(block) : 0);
                    OffsetWalker red(plan.reduced_sizes, plan.reduced_strides, 0);
                    OffsetWalker kept(plan.kept_sizes, plan.kept_strides, begin / blocks);
                    int64_t kept_row = begin / blocks;
                    for (int64_t job = begin; job < end; ++job) {
                      const int64_t row = job / blocks, col = (job % blocks) * block;
                      const int64_t inner = std::min(block, plan.inner - col);
                      for (; kept_row < row; ++kept_row) kept.Next();
                      const T* base = x + kept.offset() + col;
                      if constexpr (O::kShifted) {
                        std::fill(shift.begin(), shift.end(), -std::numeric_limits<double>::infinity());
                        red.Reset(0);
                        for (int64_t r = 0; r < outer_reduced; ++r, red.Next()) {
                          const T* p = base + red.offset();
                          for (int64_t i = 0; i < inner; ++i) shift[i] = std::max(shift[i], O::Load(p[i]));
                        }
                        for (double& s : shift) s = std::isfinite(s) ? s : 0.0;
                      }
                      std::fill(acc.begin(), acc.end(), O::Init());
                      red.Reset(0);
                      if constexpr (kVectorized<K, T>) {
                        AccumulateRows<K>(base, red, outer_reduced, static_cast<size_t>(inner), acc.data(), extremum);
                      } else {
                        for (int64_t r = 0; r < outer_reduced; ++r, red.Next()) {
                          const T* p = base + red.offset();
                          for (int64_t i = 0; i < inner; ++i)
                            acc[i] = O::Combine(acc[i], O::Pre(O::Load(p[i]), O::kShifted ? shift[i] : 0.0));
                        }
                      }
                      T* out = y + row * plan.inner + col;
                      for (int64_t i = 0; i < inner; ++i)
                        out[i] = O::Finish(acc[i], plan.reduce_count, O::kShifted ? shift[i] : 0.0);
                    }
                  });
}

using BoolAndNumeric = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
                                uint32_t, uint64_t, bool>;

template <Kind K>
class Reduce final : public OpKernel {
 public:
  // axes_input_since: the opset from which axes is an input rather than an attribute.
  Reduce(const KernelInfo& info, int axes_input_since)
      : keepdims_(info.GetIntOr("keepdims", 1) != 0),
        noop_with_empty_axes_(info.GetIntOr("noop_with_empty_axes", 0) != 0),
        axes_from_input_(info.opset() >= axes_input_since),
        allow_bool_((K == Kind::kMax || K == Kind::kMin) && info.opset() >= 20) {
    if (!axes_from_input_) {
      axes_ = info.GetIntsOr("axes", {});
    } else if (info.HasAttr("axes")) {
      info.Fail("'axes' is an input from this opset on, not an attribute");
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    std::vector<int64_t> axes = axes_;
    if (axes_from_input_) {
      if (const Tensor* a = ctx.input(1)) {
        if (a->rank() > 1) ctx.Fail("axes must be a 1-D tensor");
        if (a->dtype() == DataType::kInt64)
          axes.assign(a->data<int64_t>(), a->data<int64_t>() + a->size());
        else if (a->dtype() == DataType::kInt32)
          axes.assign(a->data<int32_t>(), a->data<int32_t>() + a->size());
        else
          ctx.Fail(StrCat("axes must be int64, got ", DataTypeName(a->dtype())));
      }
    }
    const int64_t rank = static_cast<int64_t>(x.rank());
    std::vector<bool> reduced(static_cast<size_t>(rank), axes.empty() && !(axes_from_input_ && noop_with_empty_axes_));
    for (int64_t axis : axes) {
      if (axis < -rank || axis >= rank) ctx.Fail(StrCat("axis ", axis, " is out of range for rank ", rank));
      const int64_t a = axis < 0 ? axis + rank : axis;
      if (reduced[a]) ctx.Fail(StrCat("axis ", axis, " is repeated"));
      reduced[a] = true;
    }
    Shape out_shape;
    for (int64_t d = 0; d < rank; ++d) {
      if (!reduced[d])
        out_shape.push_back(x.dim(d));
      else if (keepdims_)
        out_shape.push_back(1);
    }
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), out_shape);
    const int64_t out_size = y.size();
    if (out_size == 0) return;
    const Plan plan = MakePlan(x.shape(), reduced);
    auto run = [&](auto tag) {
      using T = typename decltype(tag)::type;
      if (x.size() == 0) {  // reducing an empty set: every output is the op's identity
        using O = Op<K, T>;
        const T v = O::Finish(O::Init(), 0, 0.0);
        std::fill(y.data<T>(), y.data<T>() + out_size, v);
        return;
      }
      RunReduce<K, T>(x.data<T>(), y.data<T>(), plan, out_size, ctx.thread_pool());
    };
    if constexpr (K == Kind::kMax || K == Kind::kMin) {
      if (allow_bool_) return Dispatch(BoolAndNumeric{}, x.dtype(), ctx.node(), run);
    }
    Dispatch(NumericTypes{}, x.dtype(), ctx.node(), run);
  }

 private:
  bool keepdims_;
  bool noop_with_empty_axes_;
  bool axes_from_input_;
  bool allow_bool_;
  std::vector<int64_t> axes_;
};

template <Kind K, int kAxesInputSince>
std::unique_ptr<OpKernel> MakeReduce(const KernelInfo& info) {
  return std::make_unique<Reduce<K>>(info, kAxesInputSince);
}

// Opsets: 1 (axes attribute), 11 (negative axes), 13 (bfloat16; ReduceSum: axes input),
// 18 (axes input for the rest), 20 (bool for Max/Min).
#define ONYX_REDUCE(name, kind, axes_since)                                                    \
  ONYX_REGISTER_KERNEL_FN("CPU", "", name, 1, (axes_since)-1, (MakeReduce<kind, axes_since>)); \
  ONYX_REGISTER_KERNEL_FN("CPU", "", name, axes_since, kOpsetMax, (MakeReduce<kind, axes_since>))

ONYX_REDUCE("ReduceSum", Kind::kSum, 13);
ONYX_REDUCE("ReduceMean", Kind::kMean, 18);
ONYX_REDUCE("ReduceMax", Kind::kMax, 18);
ONYX_REDUCE("ReduceMin", Kind::kMin, 18);
ONYX_REDUCE("ReduceProd", Kind::kProd, 18);
ONYX_REDUCE("ReduceL1", Kind::kL1, 18);
ONYX_REDUCE("ReduceL2", Kind::kL2, 18);
ONYX_REDUCE("ReduceLogSum", Kind::kLogSum, 18);
ONYX_REDUCE("ReduceLogSumExp", Kind::kLogSumExp, 18);
ONYX_REDUCE("ReduceSumSquare", Kind::kSumSquare, 18);

}  // namespace
}  // namespace onyx
