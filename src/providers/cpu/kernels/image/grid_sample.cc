// GridSample: Y[n, c, o...] = X[n, c] sampled at grid[n, o..., :] (normalized coordinates in
// [-1, 1], last spatial dim first), PyTorch's grid_sample semantics as the ONNX reference has them.
// Opset 16: 4-D input only, modes bilinear / nearest / bicubic; 20: any number of spatial dims,
// modes linear / nearest / cubic; 22: more element types. Padding modes zeros / border /
// reflection; align_corners maps -1 and 1 to the corner pixels' centres instead of their edges.
// Nearest rounds half to even (the conformance data does so in 3-D too).
#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "base/type_traits.h"
#include "platform/thread_pool.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

enum class Mode { kLinear, kNearest, kCubic };
enum class Padding { kZeros, kBorder, kReflection };

constexpr int kMaxSpatial = 3;  // taps tables are sized for up to 3 spatial dims
constexpr double kCubicA = -0.75;

// Reflects x into [lo, hi] by bouncing off the borders.
double Reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0.0) return lo;
  if (x < lo) {
    const double dx = lo - x;
    const int64_t n = static_cast<int64_t>(dx / range);
    const double r = dx - static_cast<double>(n) * range;
    return n % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const double dx = x - hi;
    const int64_t n = static_cast<int64_t>(dx / range);
    const double r = dx - static_cast<double>(n) * range;
    return n % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

void CubicCoeffs(double t, double* c) {
  const double a = kCubicA;
  const double x0 = t + 1.0, x1 = t, x2 = 1.0 - t, x3 = 2.0 - t;
  c[0] = ((a * x0 - 5.0 * a) * x0 + 8.0 * a) * x0 - 4.0 * a;
  c[1] = ((a + 2.0) * x1 - (a + 3.0)) * x1 * x1 + 1.0;
  c[2] = ((a + 2.0) * x2 - (a + 3.0)) * x2 * x2 + 1.0;
  c[3] = ((a * x3 - 5.0 * a) * x3 + 8.0 * a) * x3 - 4.0 * a;
}

class GridSample final : public OpKernel {
 public:
  explicit GridSample(const KernelInfo& info) : legacy_(info.opset() < 20) {
    const std::string mode = info.GetStringOr("mode", legacy_ ? "bilinear" : "linear");
    if (mode == (legacy_ ? "bilinear" : "linear"))
      mode_ = Mode::kLinear;
    else if (mode == "nearest")
      mode_ = Mode::kNearest;
    else if (mode == (legacy_ ? "bicubic" : "cubic"))
      mode_ = Mode::kCubic;
    else
      info.Fail(StrCat("unsupported mode '", mode, "'"));
    const std::string padding = info.GetStringOr("padding_mode", "zeros");
    if (padding == "zeros")
      padding_ = Padding::kZeros;
    else if (padding == "border")
      padding_ = Padding::kBorder;
    else if (padding == "reflection")
      padding_ = Padding::kReflection;
    else
      info.Fail(StrCat("unsupported padding_mode '", padding, "'"));
    align_corners_ = info.GetIntOr("align_corners", 0) != 0;
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& grid = ctx.required_input(1);
    const int64_t r = static_cast<int64_t>(x.rank()) - 2;
    if (r < 1 || r > kMaxSpatial) ctx.Fail("input must have 1 to 3 spatial dims ([N, C, D1, ...])");
    if (legacy_ && r != 2) ctx.Fail("opset 16 GridSample takes 4-D input only");
    if (static_cast<int64_t>(grid.rank()) != r + 2 || grid.dim(grid.rank() - 1) != r)
      ctx.Fail(StrCat("grid must be [N, O1..O", r, ", ", r, "]"));
    const int64_t n_batch = x.dim(0), channels = x.dim(1);
    if (grid.dim(0) != n_batch) ctx.Fail("grid and input disagree on N");
    Shape out_shape = {n_batch, channels};
    int64_t positions = 1;
    for (int64_t d = 0; d < r; ++d) out_shape.push_back(grid.dim(d + 1)), positions *= grid.dim(d + 1);
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), out_shape);
    if (y.size() == 0) return;
    std::array<int64_t, kMaxSpatial> dims{}, strides{};
    int64_t plane = 1;
    for (int64_t d = r; d-- > 0;) dims[d] = x.dim(d + 2), strides[d] = plane, plane *= dims[d];
    if (plane == 0) ctx.Fail("input spatial dims must be non-empty");
    std::vector<double> g(static_cast<size_t>(grid.size()));
    if (!TryDispatch(FloatTypes{}, grid.dtype(), [&](auto tag) {
          using G = typename decltype(tag)::type;
          for (int64_t i = 0; i < grid.size(); ++i) g[i] = static_cast<double>(ToCompute(grid.data<G>()[i]));
        }))
      ctx.Fail(StrCat("grid must be floating point, got ", DataTypeName(grid.dtype())));

    Dispatch(NumericTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      T* py = y.data<T>();
      constexpr int64_t kBlock = 64;
      const int64_t blocks = (positions + kBlock - 1) / kBlock;
      ThreadPool::For(ctx.thread_pool(), n_batch * blocks, static_cast<double>(kBlock * channels) * 16.0,
                      [&](int64_t begin, int64_t end) {
                        std::vector<int64_t> offsets;
                        std::vector<double> weights;
                        std::vector<int64_t> starts;
                        for (int64_t job = begin; job < end; ++job) {
                          const int64_t n = job / blocks, p0 = (job % blocks) * kBlock,
                                        p1 = std::min(positions, p0 + kBlock);
                          offsets.clear(), weights.clear(), starts.assign(1, 0);
                          for (int64_t p = p0; p < p1; ++p) {
                            Taps(g.data() + (n * positions + p) * r, r, dims, strides, offsets, weights);
                            starts.push_back(static_cast<int64_t>(offsets.size()));
                          }
                          for (int64_t c = 0; c < channels; ++c) {
                            const T* src = px + (n * channels + c) * plane;
                            T* dst = py + (n * channels + c) * positions;
                            for (int64_t p = p0; p < p1; ++p) {
                              double acc = 0.0;
                              for (int64_t t = starts[p - p0]; t < starts[p - p0 + 1]; ++t)
                                acc += weights[t] * static_cast<double>(ToCompute(src[offsets[t]]));
                              if constexpr (std::is_integral_v<T>)
                                dst[p] = static_cast<T>(std::nearbyint(acc));
                              else
                                dst[p] = FromCompute<T>(static_cast<ComputeType<T>>(acc));
                            }
                          }
                        }
                      });
    });
  }

 private:
  // Appends the (offset, weight) pairs that make up one sample; coords are [x, y, z] order.
  void Taps(const double* coords, int64_t r, const std::array<int64_t, kMaxSpatial>& dims,
            const std::array<int64_t, kMaxSpatial>& strides, std::vector<int64_t>& offsets,
            std::vector<double>& weights) const {
    // Per spatial dim d (outermost first): up to 4 (index, weight) taps; index -1 reads zero.
    std::array<std::array<int64_t, 4>, kMaxSpatial> idx{};
    std::array<std::array<double, 4>, kMaxSpatial> w{};
    int count = 0;
    for (int64_t d = 0; d < r; ++d) {
      const double len = static_cast<double>(dims[d]);
      const double nc = coords[r - 1 - d];
      // The reference keeps the unnormalized coordinate in float32.
      double v = static_cast<float>(align_corners_ ? (nc + 1.0) / 2.0 * (len - 1.0) : ((nc + 1.0) * len - 1.0) / 2.0);
      const double lo = align_corners_ ? 0.0 : -0.5, hi = align_corners_ ? len - 1.0 : len - 0.5;
      // Keep NaN and huge coordinates well-defined: far outside, where padding decides.
      v = std::isnan(v) ? lo - 2.0 : std::clamp(v, -1e9, 1e9);
      if (mode_ == Mode::kNearest) {
        v = std::nearbyint(v);
      }
      if (v < lo || v > hi) {
        if (padding_ == Padding::kBorder)
          v = std::clamp(v, 0.0, len - 1.0);
        else if (padding_ == Padding::kReflection)
          v = static_cast<float>(Reflect(v, lo, hi));
      }
      auto at = [&](int64_t i) -> int64_t {  // padding applied to an integer tap
        if (padding_ == Padding::kZeros) return (i >= 0 && i < dims[d]) ? i : -1;
        if (padding_ == Padding::kBorder) return std::clamp<int64_t>(i, 0, dims[d] - 1);
        return std::clamp<int64_t>(static_cast<int64_t>(Reflect(static_cast<double>(i), lo, hi)), 0, dims[d] - 1);
      };
      if (mode_ == Mode::kNearest) {
        idx[d][0] = at(static_cast<int64_t>(v));
        w[d][0] = 1.0;
        count = 1;
      } else {
        const double f = std::floor(v);
        const int64_t i0 = static_cast<int64_t>(f);
        if (mode_ == Mode::kLinear) {
          idx[d][0] = at(i0), idx[d][1] = at(i0 + 1);
          w[d][0] = 1.0 - (v - f), w[d][1] = v - f;
          count = 2;
        } else {
          CubicCoeffs(v - f, w[d].data());
          for (int k = 0; k < 4; ++k) idx[d][k] = at(i0 - 1 + k);
          count = 4;
        }
      }
    }
    // Cartesian product of the per-dim taps.
    int64_t combos = 1;
    for (int64_t d = 0; d < r; ++d) combos *= count;
    for (int64_t k = 0; k < combos; ++k) {
      int64_t rem = k, off = 0;
      double weight = 1.0;
      bool zero = false;
      for (int64_t d = r; d-- > 0;) {
        const int t = static_cast<int>(rem % count);
        rem /= count;
        if (idx[d][t] < 0) zero = true;
        off += idx[d][t] * strides[d];
        weight *= w[d][t];
      }
      if (zero || weight == 0.0) continue;
      offsets.push_back(off);
      weights.push_back(weight);
    }
  }

  bool legacy_;
  Mode mode_ = Mode::kLinear;
  Padding padding_ = Padding::kZeros;
  bool align_corners_ = false;
};

ONYX_CPU_KERNEL("GridSample", 16, 19, GridSample);
ONYX_CPU_KERNEL("GridSample", 20, 21, GridSample);
ONYX_CPU_KERNEL("GridSample", 22, kOpsetMax, GridSample);

}  // namespace
}  // namespace onyx
