// MaxPool (with Indices), AveragePool and LpPool over any number of spatial dims, every opset.
// Each window's valid tap range is computed per dimension from tables built once per run, so
// the inner loops read the input without bound checks; planes (n, c) run in parallel.
#include <cmath>
#include <limits>
#include <vector>

#include "base/type_traits.h"
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
  int64_t in = 1, dilation = 1;
  std::vector<int64_t> start, lo, hi, padded;
};

struct PoolPlan {
  PoolKind kind = PoolKind::kMax;
  bool count_include_pad = false;
  double p = 2.0;
  bool column_major_indices = false;
  std::vector<DimTable> dims;  // at least 3; leading dims of size 1 pad lower ranks
  int64_t in_size = 1, out_size = 1;
};

PoolPlan MakePlan(const WindowGeometry& g) {
  PoolPlan plan;
  const size_t r = g.rank();
  const size_t lead = r < 3 ? 3 - r : 0;
  plan.dims.resize(lead + r);
  for (size_t i = 0; i < lead; ++i) {
    DimTable& t = plan.dims[i];
    t.start = {0};
    t.lo = {0};
    t.hi = {1};
    t.padded = {1};
  }
  for (size_t d = 0; d < r; ++d) {
    DimTable& t = plan.dims[lead + d];
    t.in = g.in[d];
    t.dilation = g.dilation[d];
    const int64_t k = g.kernel[d], dil = g.dilation[d];
    for (int64_t o = 0; o < g.out[d]; ++o) {
      const int64_t start = o * g.stride[d] - g.pad_begin[d];
      const int64_t lo = start < 0 ? std::min(k, nn::CeilDiv(-start, dil)) : 0;
      const int64_t hi = std::clamp<int64_t>(nn::CeilDiv(g.in[d] - start, dil), lo, k);
      const int64_t padded_hi = std::clamp<int64_t>(nn::CeilDiv(g.in[d] + g.pad_end[d] - start, dil), 0, k);
      t.start.push_back(start);
      t.lo.push_back(lo);
      t.hi.push_back(hi);
      t.padded.push_back(padded_hi);
    }
  }
  plan.in_size = g.InSize();
  plan.out_size = g.OutSize();
  return plan;
}

template <typename C>
struct MaxAcc {
  C best = std::numeric_limits<C>::lowest();
  int64_t at = -1;
  void Add(C v, int64_t i) {
    if (v > best) {
      best = v;
      at = i;
    }
  }
};

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
  using Acc = std::conditional_t<std::is_same_v<C, double>, double, float>;
  const size_t r = plan.dims.size();
  const DimTable& t0 = plan.dims[r - 3];
  const DimTable& t1 = plan.dims[r - 2];
  const DimTable& t2 = plan.dims[r - 1];
  const int64_t d0 = t0.dilation, d1 = t1.dilation, d2 = t2.dilation;
  const int64_t in1 = t1.in, in2 = t2.in;
  const int64_t out0 = static_cast<int64_t>(t0.start.size()), out1 = static_cast<int64_t>(t1.start.size()),
                out2 = static_cast<int64_t>(t2.start.size());
  // Ranks above 3 walk the outer dims with an odometer; their taps go through `outer_offsets`.
  const size_t outer_rank = r - 3;
  int64_t outer_in = 1, outer_out = 1;
  for (size_t d = 0; d < outer_rank; ++d) {
    outer_in *= plan.dims[d].in;
    outer_out *= static_cast<int64_t>(plan.dims[d].start.size());
  }
  const int64_t inner_in = t0.in * in1 * in2;
  std::vector<int64_t> opos(outer_rank), kpos(outer_rank);

  for (int64_t plane = begin; plane < end; ++plane) {
    const T* xp = x + plane * plan.in_size;
    T* yp = y + plane * plan.out_size;
    int64_t yi = 0;
    std::fill(opos.begin(), opos.end(), 0);
    for (int64_t oo = 0; oo < outer_out; ++oo) {
      // The outer window: taps of outer dims and the count of padded / valid outer taps.
      int64_t outer_taps = 1, outer_padded = 1;
      bool outer_empty = false;
      for (size_t d = 0; d < outer_rank; ++d) {
        const DimTable& t = plan.dims[d];
        outer_taps *= t.hi[opos[d]] - t.lo[opos[d]];
        outer_padded *= t.padded[opos[d]];
        kpos[d] = t.lo[opos[d]];
        if (t.hi[opos[d]] <= t.lo[opos[d]]) outer_empty = true;
      }
      for (int64_t o0 = 0; o0 < out0; ++o0) {
        const int64_t s0 = t0.start[o0], lo0 = t0.lo[o0], hi0 = t0.hi[o0];
        for (int64_t o1 = 0; o1 < out1; ++o1) {
          const int64_t s1 = t1.start[o1], lo1 = t1.lo[o1], hi1 = t1.hi[o1];
          for (int64_t o2 = 0; o2 < out2; ++o2, ++yi) {
            const int64_t s2 = t2.start[o2], lo2 = t2.lo[o2], hi2 = t2.hi[o2];
            MaxAcc<C> mx;
            Acc sum = 0;
            // One pass over the inner 3-D window for each outer tap.
            std::vector<int64_t> kp = kpos;
            for (bool more = !outer_empty; more;) {
              int64_t outer_off = 0;
              for (size_t d = 0; d < outer_rank; ++d)
                outer_off = outer_off * plan.dims[d].in + plan.dims[d].start[opos[d]] + kp[d] * plan.dims[d].dilation;
              const T* base = xp + outer_off * inner_in;
              for (int64_t k0 = lo0; k0 < hi0; ++k0) {
                const int64_t row0 = (s0 + k0 * d0) * in1;
                for (int64_t k1 = lo1; k1 < hi1; ++k1) {
                  const int64_t row = (row0 + s1 + k1 * d1) * in2 + s2;
                  if constexpr (kind == PoolKind::kMax) {
                    for (int64_t k2 = lo2; k2 < hi2; ++k2) {
                      const int64_t i = row + k2 * d2;
                      mx.Add(static_cast<C>(ToCompute(base[i])), outer_off * inner_in + i);
                    }
                  } else if constexpr (kind == PoolKind::kAverage) {
                    for (int64_t k2 = lo2; k2 < hi2; ++k2) sum += static_cast<Acc>(ToCompute(base[row + k2 * d2]));
                  } else {
                    for (int64_t k2 = lo2; k2 < hi2; ++k2) {
                      const Acc v = std::abs(static_cast<Acc>(ToCompute(base[row + k2 * d2])));
                      sum += plan.p == 2.0 ? v * v : plan.p == 1.0 ? v : static_cast<Acc>(std::pow(v, plan.p));
                    }
                  }
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
            if constexpr (kind == PoolKind::kMax) {
              yp[yi] = FromCompute<T>(mx.best);
              if (indices != nullptr) {
                const int64_t at = mx.at < 0 ? 0 : mx.at;
                indices[plane * plan.out_size + yi] =
                    plane * plan.in_size + (plan.column_major_indices ? ToColumnMajor(at, plan.dims) : at);
              }
            } else if constexpr (kind == PoolKind::kAverage) {
              const int64_t count = plan.count_include_pad ? outer_padded * t0.padded[o0] * t1.padded[o1] * t2.padded[o2]
                                                           : outer_taps * (hi0 - lo0) * (hi1 - lo1) * (hi2 - lo2);
              yp[yi] = FromCompute<T>(count > 0 ? static_cast<C>(sum / static_cast<Acc>(count))
                                                : std::numeric_limits<C>::quiet_NaN());
            } else {
              const Acc v = plan.p == 2.0 ? std::sqrt(sum) : plan.p == 1.0 ? sum : std::pow(sum, static_cast<Acc>(1.0 / plan.p));
              yp[yi] = FromCompute<T>(static_cast<C>(v));
            }
          }
        }
      }
      for (size_t d = outer_rank; d-- > 0;) {
        if (++opos[d] < static_cast<int64_t>(plan.dims[d].start.size())) break;
        opos[d] = 0;
      }
    }
  }
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
    plan.kind = kind;
    plan.count_include_pad = count_include_pad_;
    plan.p = p_;
    plan.column_major_indices = storage_order_ == 1;
    const int64_t planes = x.dim(0) * x.dim(1);
    const double cost = static_cast<double>(plan.out_size) * static_cast<double>(g.KernelSize()) + 1.0;
    auto run = [&](auto tag) {
      using T = typename decltype(tag)::type;
      ThreadPool::For(ctx.thread_pool(), planes, cost, [&](int64_t begin, int64_t end) {
        PoolPlanes<T, kind>(plan, x.data<T>(), y.data<T>(), indices, begin, end);
      });
    };
    if constexpr (kind == PoolKind::kMax) {
      Dispatch(TypeList<float, double, Float16, BFloat16, int8_t, uint8_t>{}, x.dtype(), ctx.node().Describe(), run);
    } else {
      Dispatch(FloatTypes{}, x.dtype(), ctx.node().Describe(), run);
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
