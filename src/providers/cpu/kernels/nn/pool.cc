// MaxPool (with Indices), AveragePool and LpPool over any number of spatial dims, every opset.
// A row of outputs (the last spatial dim) is accumulated at once: for every tap of the leading
// dims and every kernel offset of the last dim, the outputs whose tap lies inside the input
// form one contiguous range (from tables built once per run), so the inner loops run over
// outputs with no bound checks and vectorize. Planes (n, c) run in parallel.
#include <cmath>
#include <limits>
#include <vector>

#include "base/type_traits.h"
#include "linalg/q8_pool.h"
#include "platform/thread_pool.h"
#include "providers/cpu/kernels/nn/window_geometry.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

using nn::WindowGeometry;

enum class PoolKind { kMax, kAverage, kLp };

// Per spatial dim and output position: where the window starts (may be in the padding), the
// kernel offsets [lo, hi) whose taps fall inside the input, and how many taps fall inside the
// padded extent (count_include_pad's divisor).
struct DimTable {
  int64_t in = 1, out = 1, stride = 1, dilation = 1;
  std::vector<int64_t> start, lo, hi, padded;
};

struct PoolPlan {
  bool count_include_pad = false;
  double p = 2.0;
  bool column_major_indices = false;
  std::vector<DimTable> dims;
  // Last dim, per kernel offset k: outputs [k_lo, k_hi) read input o * stride + k_shift.
  std::vector<int64_t> k_lo, k_hi, k_shift;
  int64_t in_size = 1, out_size = 1;
};

PoolPlan MakePlan(const WindowGeometry& g) {
  PoolPlan plan;
  const size_t r = g.rank();
  plan.dims.resize(r);
  for (size_t d = 0; d < r; ++d) {
    DimTable& t = plan.dims[d];
    t.in = g.in[d];
    t.out = g.out[d];
    t.stride = g.stride[d];
    t.dilation = g.dilation[d];
    const int64_t k = g.kernel[d], dil = g.dilation[d];
    for (int64_t o = 0; o < g.out[d]; ++o) {
      const int64_t start = o * g.stride[d] - g.pad_begin[d];
      const int64_t lo = start < 0 ? std::min(k, CeilDiv(-start, dil)) : 0;
      const int64_t hi = std::clamp<int64_t>(CeilDiv(g.in[d] - start, dil), lo, k);
      const int64_t padded_hi = std::clamp<int64_t>(CeilDiv(g.in[d] + g.pad_end[d] - start, dil), 0, k);
      t.start.push_back(start);
      t.lo.push_back(lo);
      t.hi.push_back(hi);
      t.padded.push_back(padded_hi);
    }
  }
  const size_t last = r - 1;
  for (int64_t k = 0; k < g.kernel[last]; ++k) {
    int64_t lo = 0, hi = 0;
    nn::ValidRange(g.in[last], g.out[last], g.stride[last], g.pad_begin[last], k * g.dilation[last], &lo, &hi);
    plan.k_lo.push_back(lo);
    plan.k_hi.push_back(hi);
    plan.k_shift.push_back(k * g.dilation[last] - g.pad_begin[last]);
  }
  plan.in_size = g.InSize();
  plan.out_size = g.OutSize();
  return plan;
}

// Column-major spatial index of a row-major one (MaxPool storage_order = 1).
int64_t ToColumnMajor(int64_t index, const std::vector<DimTable>& dims) {
  int64_t result = 0, scale = 1;
  std::vector<int64_t> coord(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    coord[d] = index % dims[d].in;
    index /= dims[d].in;
  }
  for (size_t d = 0; d < dims.size(); ++d) {
    result += coord[d] * scale;
    scale *= dims[d].in;
  }
  return result;
}

// Pools planes [begin, end): x and y point at plane 0; indices may be null.
template <typename T, PoolKind kind>
void PoolPlanes(const PoolPlan& plan, const T* x, T* y, int64_t* indices, int64_t begin, int64_t end) {
  using C = std::conditional_t<std::is_integral_v<T>, T, ComputeType<T>>;
  using Acc = std::conditional_t<kind == PoolKind::kMax, C, std::conditional_t<std::is_same_v<C, double>, double, float>>;
  const size_t outer_rank = plan.dims.size() - 1;
  const DimTable& last = plan.dims.back();
  const int64_t out_last = last.out, in_last = last.in, stride = last.stride;
  const int64_t klast = static_cast<int64_t>(plan.k_lo.size());
  const double p = plan.p;
  int64_t outer_out = 1;
  for (size_t d = 0; d < outer_rank; ++d) outer_out *= plan.dims[d].out;
  std::vector<Acc> acc(static_cast<size_t>(out_last));
  std::vector<int64_t> arg(indices != nullptr ? static_cast<size_t>(out_last) : 0);
  std::vector<int64_t> opos(outer_rank), kp(outer_rank);

  for (int64_t plane = begin; plane < end; ++plane) {
    const T* xp = x + plane * plan.in_size;
    T* yp = y + plane * plan.out_size;
    std::fill(opos.begin(), opos.end(), 0);
    for (int64_t oo = 0; oo < outer_out; ++oo) {
      std::fill(acc.begin(), acc.end(), kind == PoolKind::kMax ? std::numeric_limits<Acc>::lowest() : Acc{0});
      std::fill(arg.begin(), arg.end(), int64_t{-1});
      // The leading dims' part of the windows of this output row: valid and padded tap counts.
      int64_t outer_taps = 1, outer_padded = 1;
      for (size_t d = 0; d < outer_rank; ++d) {
        const DimTable& t = plan.dims[d];
        outer_taps *= t.hi[opos[d]] - t.lo[opos[d]];
        outer_padded *= t.padded[opos[d]];
        kp[d] = t.lo[opos[d]];
      }
      for (bool more = outer_taps > 0; more;) {
        int64_t row_index = 0;
        for (size_t d = 0; d < outer_rank; ++d) {
          const DimTable& t = plan.dims[d];
          row_index = row_index * t.in + t.start[opos[d]] + kp[d] * t.dilation;
        }
        const T* row = xp + row_index * in_last;
        for (int64_t k = 0; k < klast; ++k) {
          const int64_t lo = plan.k_lo[k], hi = plan.k_hi[k], shift = plan.k_shift[k];
          if constexpr (kind == PoolKind::kMax) {
            if (indices != nullptr) {
              for (int64_t o = lo; o < hi; ++o) {
                const C v = static_cast<C>(ToCompute(row[o * stride + shift]));
                if (v > acc[o]) {
                  acc[o] = v;
                  arg[o] = row_index * in_last + o * stride + shift;
                }
              }
            } else if (stride == 1) {
              for (int64_t o = lo; o < hi; ++o) acc[o] = std::max(acc[o], static_cast<C>(ToCompute(row[o + shift])));
            } else {
              for (int64_t o = lo; o < hi; ++o)
                acc[o] = std::max(acc[o], static_cast<C>(ToCompute(row[o * stride + shift])));
            }
          } else if constexpr (kind == PoolKind::kAverage) {
            for (int64_t o = lo; o < hi; ++o) acc[o] += static_cast<Acc>(ToCompute(row[o * stride + shift]));
          } else if (p == 2.0) {
            for (int64_t o = lo; o < hi; ++o) {
              const Acc v = static_cast<Acc>(ToCompute(row[o * stride + shift]));
              acc[o] += v * v;
            }
          } else if (p == 1.0) {
            for (int64_t o = lo; o < hi; ++o) acc[o] += std::abs(static_cast<Acc>(ToCompute(row[o * stride + shift])));
          } else {
            for (int64_t o = lo; o < hi; ++o)
              acc[o] += static_cast<Acc>(std::pow(std::abs(static_cast<Acc>(ToCompute(row[o * stride + shift]))), p));
          }
        }
        more = false;
        for (size_t d = outer_rank; d-- > 0;) {
          if (++kp[d] < plan.dims[d].hi[opos[d]]) {
            more = true;
            break;
          }
          kp[d] = plan.dims[d].lo[opos[d]];
        }
      }
      T* out = yp + oo * out_last;
      for (int64_t o = 0; o < out_last; ++o) {
        if constexpr (kind == PoolKind::kMax) {
          out[o] = FromCompute<T>(acc[o]);
          if (indices != nullptr) {
            const int64_t at = arg[o] < 0 ? 0 : arg[o];
            indices[plane * plan.out_size + oo * out_last + o] =
                plane * plan.in_size + (plan.column_major_indices ? ToColumnMajor(at, plan.dims) : at);
          }
        } else if constexpr (kind == PoolKind::kAverage) {
          const int64_t count = plan.count_include_pad ? outer_padded * last.padded[o]
                                                       : outer_taps * (last.hi[o] - last.lo[o]);
          out[o] = FromCompute<T>(count > 0 ? static_cast<C>(acc[o] / static_cast<Acc>(count))
                                            : std::numeric_limits<C>::quiet_NaN());
        } else {
          const Acc v = p == 2.0 ? std::sqrt(acc[o]) : p == 1.0 ? acc[o] : std::pow(acc[o], static_cast<Acc>(1.0 / p));
          out[o] = FromCompute<T>(static_cast<C>(v));
        }
      }
      for (size_t d = outer_rank; d-- > 0;) {
        if (++opos[d] < plan.dims[d].out) break;
        opos[d] = 0;
      }
    }
  }
}

// 2-D max pooling of 8-bit codes without Indices, through the vectorized rows of
// linalg/q8_pool.h; false (nothing done) for other shapes, or geometry too wide for its scratch.
bool TryQ8MaxPool2d(const WindowGeometry& g, const Tensor& x, Tensor& y, int64_t planes, ThreadPool* pool) {
  if (g.rank() != 2 || (x.dtype() != DataType::kUInt8 && x.dtype() != DataType::kInt8)) return false;
  constexpr int64_t kLimit = int64_t{1} << 20;
  for (size_t d = 0; d < 2; ++d)
    if (g.in[d] > kLimit || g.kernel[d] > kLimit || g.stride[d] > kLimit || g.dilation[d] > kLimit ||
        g.pad_begin[d] > kLimit || g.out[d] > kLimit)
      return false;
  linalg::Q8PoolGeometry q;
  q.in_h = g.in[0], q.in_w = g.in[1], q.out_h = g.out[0], q.out_w = g.out[1];
  q.kernel_h = g.kernel[0], q.kernel_w = g.kernel[1], q.stride_h = g.stride[0], q.stride_w = g.stride[1];
  q.dilation_h = g.dilation[0], q.dilation_w = g.dilation[1], q.pad_top = g.pad_begin[0], q.pad_left = g.pad_begin[1];
  const int64_t in_size = g.InSize(), out_size = g.OutSize(), scratch = linalg::Q8MaxPool2dScratch(q);
  const double cost = static_cast<double>(out_size) * static_cast<double>(g.kernel[0]) + 1.0;
  ThreadPool::For(pool, planes, cost, [&](int64_t begin, int64_t end) {
    std::vector<uint8_t> buf(static_cast<size_t>(scratch));
    for (int64_t p = begin; p < end; ++p) {
      if (x.dtype() == DataType::kUInt8)
        linalg::Q8MaxPool2dU8(q, x.data<uint8_t>() + p * in_size, y.data<uint8_t>() + p * out_size, buf.data());
      else
        linalg::Q8MaxPool2dS8(q, x.data<int8_t>() + p * in_size, y.data<int8_t>() + p * out_size,
                              reinterpret_cast<int8_t*>(buf.data()));
    }
  });
  return true;
}

template <PoolKind kind>
class Pool final : public OpKernel {
 public:
  explicit Pool(const KernelInfo& info) : attrs_(nn::ParseWindowAttrs(info)) {
    if (attrs_.kernel_shape.empty()) info.Fail("attribute kernel_shape is required");
    count_include_pad_ = info.GetIntOr("count_include_pad", 0) != 0;
    storage_order_ = info.GetIntOr("storage_order", 0);
    if (storage_order_ != 0 && storage_order_ != 1) info.Fail(StrCat("storage_order must be 0 or 1, got ", storage_order_));
    if (const ir::Attribute* a = info.FindAttr("p")) {
      // LpPool-1 has a float p; later opsets an int.
      p_ = a->type == ir::AttrType::kFloat ? static_cast<double>(a->f) : static_cast<double>(a->i);
      if (!(p_ > 0)) info.Fail(StrCat("p must be positive, got ", p_));
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const WindowGeometry g = nn::ResolveForwardWindow(attrs_, x.shape(), attrs_.kernel_shape, ctx);
    Shape y_shape = {x.dim(0), x.dim(1)};
    y_shape.insert(y_shape.end(), g.out.begin(), g.out.end());
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), y_shape);
    int64_t* indices = nullptr;
    if (kind == PoolKind::kMax && ctx.num_outputs() > 1 && ctx.has_output(1))
      indices = ctx.AllocateOutput(1, DataType::kInt64, y_shape).data<int64_t>();
    if (y.size() == 0) return;
    PoolPlan plan = MakePlan(g);
    plan.count_include_pad = count_include_pad_;
    plan.p = p_;
    plan.column_major_indices = storage_order_ == 1;
    const int64_t planes = x.dim(0) * x.dim(1);
    if (kind == PoolKind::kMax && indices == nullptr && TryQ8MaxPool2d(g, x, y, planes, ctx.thread_pool())) return;
    const double cost = static_cast<double>(plan.out_size) * static_cast<double>(g.KernelSize()) + 1.0;
    auto run = [&](auto tag) {
      using T = typename decltype(tag)::type;
      ThreadPool::For(ctx.thread_pool(), planes, cost, [&](int64_t begin, int64_t end) {
        PoolPlanes<T, kind>(plan, x.data<T>(), y.data<T>(), indices, begin, end);
      });
    };
    if constexpr (kind == PoolKind::kMax) {
      Dispatch(TypeList<float, double, Float16, BFloat16, int8_t, uint8_t>{}, x.dtype(), ctx.node(), run);
    } else {
      Dispatch(FloatTypes{}, x.dtype(), ctx.node(), run);
    }
  }

 private:
  nn::WindowAttrs attrs_;
  bool count_include_pad_ = false;
  int64_t storage_order_ = 0;
  double p_ = 2.0;
};

using MaxPool = Pool<PoolKind::kMax>;
using AveragePool = Pool<PoolKind::kAverage>;
using LpPool = Pool<PoolKind::kLp>;

// Opset ranges: MaxPool gained Indices/storage_order (8), dilations/ceil_mode (10), int8 (12);
// AveragePool count_include_pad (7), ceil_mode (10), dilations (19); LpPool int p (2),
// ceil_mode/dilations (18); all gained bfloat16 at 22. Attributes absent in older opsets keep
// their defaults, so one class serves each range.
ONYX_CPU_KERNEL("MaxPool", 1, 7, MaxPool);
ONYX_CPU_KERNEL("MaxPool", 8, 9, MaxPool);
ONYX_CPU_KERNEL("MaxPool", 10, 10, MaxPool);
ONYX_CPU_KERNEL("MaxPool", 11, 11, MaxPool);
ONYX_CPU_KERNEL("MaxPool", 12, 21, MaxPool);
ONYX_CPU_KERNEL("MaxPool", 22, kOpsetMax, MaxPool);
ONYX_CPU_KERNEL("AveragePool", 1, 6, AveragePool);
ONYX_CPU_KERNEL("AveragePool", 7, 9, AveragePool);
ONYX_CPU_KERNEL("AveragePool", 10, 10, AveragePool);
ONYX_CPU_KERNEL("AveragePool", 11, 18, AveragePool);
ONYX_CPU_KERNEL("AveragePool", 19, 21, AveragePool);
ONYX_CPU_KERNEL("AveragePool", 22, kOpsetMax, AveragePool);
ONYX_CPU_KERNEL("LpPool", 1, 1, LpPool);
ONYX_CPU_KERNEL("LpPool", 2, 10, LpPool);
ONYX_CPU_KERNEL("LpPool", 11, 17, LpPool);
ONYX_CPU_KERNEL("LpPool", 18, 21, LpPool);
ONYX_CPU_KERNEL("LpPool", 22, kOpsetMax, LpPool);

}  // namespace
}  // namespace onyx
