// Resize (opsets 10, 11-12, 13-17, 18, 19+) and Upsample (opsets 7-8 with a `scales` attribute,
// 9-10 with a scales input).
//
// Input conventions: Upsample-7 takes scales as an attribute; Upsample-9 and Resize-10 take
// (X, scales); Resize-11 takes (X, roi, scales[, sizes]) with empty tensors standing for absent
// ones; 13 makes roi and scales optional; 18 adds antialias, axes and keep_aspect_ratio_policy;
// 19 adds the half_pixel_symmetric mode. Before opset 11 coordinates are asymmetric and nearest
// picks floor when upsampling, ceil when downsampling (what models of that era expect).
//
// The math follows the ONNX reference: every resized axis maps an output coordinate to an input
// coordinate x, then takes weighted taps around it (nearest: one; linear: 2; cubic: 4; antialias
// widens linear/cubic by 1/scale when downsampling), with edge clamping, exclude_outside
// renormalisation and tf_crop_and_resize extrapolation. Linear/cubic run one separable pass per
// resized axis (innermost first) in double; nearest is a single gather for any element type.
// Linear on uint8 / int8 instead follows ONNX Runtime's own float / fixed-point arithmetic
// (resize_linear_8bit.h) wherever ORT has a path, so quantized models match it code for code.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "base/type_traits.h"
#include "platform/thread_pool.h"
#include "providers/cpu/kernels/image/resize_coord.h"
#include "providers/cpu/kernels/image/resize_linear_8bit.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

enum class Mode { kNearest, kLinear, kCubic };
using Coord = ResizeCoord;
enum class Nearest { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kLegacy };
enum class AspectPolicy { kStretch, kNotLarger, kNotSmaller };

// Which inputs carry what, by op and opset.
enum class Convention { kScalesAttr, kScalesInput, kRoiScalesSizes };

struct ResizeParams {
  Mode mode = Mode::kNearest;
  Coord coord = Coord::kHalfPixel;
  Nearest nearest = Nearest::kRoundPreferFloor;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation = 0.0;
  bool antialias = false;
};

// The taps of one resized axis: output j reads in[index[t]] * weight[t] for t in [start[j], start[j+1]).
struct AxisTaps {
  int64_t in = 0, out = 0;
  std::vector<int64_t> start, index;
  std::vector<double> weight;
  std::vector<uint8_t> outside;  // tf_crop_and_resize: the output takes the extrapolation value
  bool identity = true;
};

double KeysCubic(double x, double a) {
  x = std::fabs(x);
  if (x <= 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
  if (x < 2.0) return ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a;
  return 0.0;
}

AxisTaps MakeTaps(const ResizeParams& p, int64_t in, int64_t out, double scale, double roi_start, double roi_end) {
  AxisTaps taps;
  taps.in = in;
  taps.out = out;
  taps.start.push_back(0);
  taps.outside.assign(static_cast<size_t>(out), 0);
  const double out_width = scale * static_cast<double>(in);  // fractional, as the reference uses it
  const double last = static_cast<double>(in - 1);
  std::vector<double> coeffs;
  for (int64_t j = 0; j < out; ++j) {
    const double x = static_cast<double>(j);
    double xo = 0.0;
    switch (p.coord) {
      case Coord::kHalfPixel:
        xo = (x + 0.5) / scale - 0.5;
        break;
      case Coord::kHalfPixelSymmetric: {
        const double adjustment = static_cast<double>(out) / out_width;
        const double center = static_cast<double>(in) / 2.0;
        xo = center * (1.0 - adjustment) + (x + 0.5) / scale - 0.5;
        break;
      }
      case Coord::kPytorchHalfPixel:
        xo = out_width == 1.0 ? -0.5 : (x + 0.5) / scale - 0.5;
        break;
      case Coord::kAlignCorners:
        xo = out_width == 1.0 ? 0.0 : x * last / (out_width - 1.0);
        break;
      case Coord::kAsymmetric:
        xo = x / scale;
        break;
      case Coord::kTfHalfPixelForNn:
        xo = (x + 0.5) / scale;
        break;
      case Coord::kTfCropAndResize:
        xo = out_width == 1.0 ? (roi_end - roi_start) * last / 2.0
                              : x * (roi_end - roi_start) * last / (out_width - 1.0);
        xo += roi_start * last;
        if (xo < 0.0 || xo > last) taps.outside[j] = 1;
        break;
    }
    if (taps.outside[j]) {
      taps.start.push_back(static_cast<int64_t>(taps.index.size()));
      taps.identity = false;
      continue;
    }
    if (p.mode == Mode::kNearest) {
      int64_t idx = 0;
      const double fl = std::floor(xo);
      const double frac = xo - fl;
      switch (p.nearest) {
        case Nearest::kRoundPreferFloor:
          idx = static_cast<int64_t>(frac <= 0.5 ? fl : fl + 1.0);
          break;
        case Nearest::kRoundPreferCeil:
          idx = static_cast<int64_t>(frac < 0.5 ? fl : fl + 1.0);
          break;
        case Nearest::kFloor:
          idx = static_cast<int64_t>(fl);
          break;
        case Nearest::kCeil:
          idx = static_cast<int64_t>(std::ceil(xo));
          break;
        case Nearest::kLegacy:
          idx = static_cast<int64_t>(scale < 1.0 ? std::ceil(xo) : std::trunc(xo));
          break;
      }
      idx = std::clamp<int64_t>(idx, 0, in - 1);
      taps.index.push_back(idx);
      taps.weight.push_back(1.0);
    } else {
      // x = left + ratio with ratio in (0, 1]; taps sit at left + first + i.
      const double fl = std::floor(xo);
      const double ratio = xo == fl ? 1.0 : xo - fl;
      const int64_t left = static_cast<int64_t>(xo == fl ? fl - 1.0 : fl);
      int64_t first = 0;
      coeffs.clear();
      if (!p.antialias) {
        if (p.mode == Mode::kLinear) {
          coeffs = {1.0 - ratio, ratio};
        } else {
          for (int i = -1; i <= 2; ++i) coeffs.push_back(KeysCubic(static_cast<double>(i) - ratio, p.cubic_a));
        }
        first = p.mode == Mode::kLinear ? 0 : -1;
      } else {
        // Antialias stretches the filter by 1/scale when downsampling and normalises it.
        const double s = std::min(scale, 1.0);
        const double support = p.mode == Mode::kLinear ? 1.0 : 2.0;
        first = static_cast<int64_t>(std::floor(-support / s)) + 1;
        const int64_t n = 2 - 2 * first;
        double sum = 0.0;
        for (int64_t i = 0; i < n; ++i) {
          const double arg = (static_cast<double>(first + i) - ratio) * s;
          const double c =
              p.mode == Mode::kLinear ? std::clamp(1.0 - std::fabs(arg), 0.0, 1.0) : KeysCubic(arg, p.cubic_a);
          coeffs.push_back(c);
          sum += c;
        }
        for (double& c : coeffs) c /= sum;
      }
      if (p.exclude_outside) {
        double sum = 0.0;
        for (size_t i = 0; i < coeffs.size(); ++i) {
          const int64_t idx = left + first + static_cast<int64_t>(i);
          if (idx < 0 || idx >= in) coeffs[i] = 0.0;
          sum += coeffs[i];
        }
        for (double& c : coeffs) c /= sum;
      }
      for (size_t i = 0; i < coeffs.size(); ++i) {
        if (coeffs[i] == 0.0) continue;
        taps.index.push_back(std::clamp<int64_t>(left + first + static_cast<int64_t>(i), 0, in - 1));
        taps.weight.push_back(coeffs[i]);
      }
    }
    const int64_t s = taps.start.back();
    const int64_t e = static_cast<int64_t>(taps.index.size());
    if (!(e - s == 1 && taps.index[s] == j && taps.weight[s] == 1.0)) taps.identity = false;
    taps.start.push_back(e);
  }
  if (in != out) taps.identity = false;
  return taps;
}

// One separable pass along `axis` of a [outer, in, inner] buffer into [outer, out, inner].
void FilterAxis(const std::vector<double>& src, std::vector<double>& dst, int64_t outer, int64_t inner,
                const AxisTaps& taps, double extrapolation, ThreadPool* pool) {
  dst.assign(static_cast<size_t>(outer * taps.out * inner), 0.0);
  ThreadPool::For(pool, outer * taps.out, static_cast<double>(inner) * 8.0, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t o = r / taps.out, j = r % taps.out;
      double* y = dst.data() + r * inner;
      if (taps.outside[j]) {
        std::fill(y, y + inner, extrapolation);
        continue;
      }
      for (int64_t t = taps.start[j]; t < taps.start[j + 1]; ++t) {
        const double w = taps.weight[t];
        const double* x = src.data() + (o * taps.in + taps.index[t]) * inner;
        for (int64_t i = 0; i < inner; ++i) y[i] += w * x[i];
      }
    }
  });
}

template <typename T>
T StoreResized(double v) {
  if constexpr (std::is_integral_v<T>) {
    // Linear/cubic on integers: round to nearest and saturate (cubic overshoots).
    const double r = std::nearbyint(v);
    if (std::isnan(r)) return T(0);
    if (r <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    if (r >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(r);
  } else {
    return FromCompute<T>(static_cast<ComputeType<T>>(v));
  }
}

template <typename T>
T ExtrapolationAs(double v) {
  if constexpr (std::is_same_v<T, std::string>)
    return std::string();
  else if constexpr (std::is_same_v<T, bool>)
    return v != 0.0;
  else if constexpr (std::is_integral_v<T>)
    return StoreResized<T>(v);
  else
    return FromCompute<T>(static_cast<ComputeType<T>>(v));
}

// Nearest: every output element copies one input element (or takes the extrapolation value).
template <typename T>
void GatherNearest(const T* x, T* y, const Shape& in_shape, const std::vector<AxisTaps>& taps, double extrapolation,
                   ThreadPool* pool) {
  const size_t rank = in_shape.size();
  std::vector<int64_t> in_strides(rank, 1);
  for (size_t d = rank; d-- > 1;) in_strides[d - 1] = in_strides[d] * in_shape[d];
  const int64_t inner_out = taps[rank - 1].out;
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < rank; ++d) rows *= taps[d].out;
  const T fill = ExtrapolationAs<T>(extrapolation);
  // Per output coordinate of each axis: the input offset, or -1 when outside.
  std::vector<std::vector<int64_t>> offsets(rank);
  for (size_t d = 0; d < rank; ++d)
    for (int64_t j = 0; j < taps[d].out; ++j)
      offsets[d].push_back(taps[d].outside[j] ? -1 : taps[d].index[taps[d].start[j]] * in_strides[d]);
  // An innermost axis kept as it is (channels-last images scaled in H and W): whole rows copied.
  bool same_last = taps[rank - 1].out == in_shape[rank - 1];
  for (int64_t j = 0; same_last && j < inner_out; ++j) same_last = offsets[rank - 1][j] == j;
  ThreadPool::For(pool, rows, static_cast<double>(inner_out) * 2.0, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      int64_t rem = r, base = 0;
      bool outside = false;
      for (size_t d = rank - 1; d-- > 0;) {
        const int64_t off = offsets[d][rem % taps[d].out];
        rem /= taps[d].out;
        if (off < 0) outside = true;
        base += off;
      }
      T* row = y + r * inner_out;
      const auto& last = offsets[rank - 1];
      if (same_last && !outside) {
        std::copy_n(x + base, inner_out, row);
        continue;
      }
      for (int64_t j = 0; j < inner_out; ++j) row[j] = (outside || last[j] < 0) ? fill : x[base + last[j]];
    }
  });
}

class Resize final : public OpKernel {
 public:
  Resize(const KernelInfo& info, Convention convention) : convention_(convention), opset_(info.opset()) {
    const bool upsample = convention != Convention::kRoiScalesSizes && info.node().op_type == "Upsample";
    const std::string mode = info.GetStringOr("mode", "nearest");
    if (mode == "nearest")
      params_.mode = Mode::kNearest;
    else if (mode == "linear" || (upsample && mode == "bilinear"))
      params_.mode = Mode::kLinear;
    else if (mode == "cubic" && convention == Convention::kRoiScalesSizes)
      params_.mode = Mode::kCubic;
    else
      info.Fail(StrCat("unsupported mode '", mode, "'"));
    if (convention_ == Convention::kScalesAttr) {
      for (float s : info.GetFloats("scales")) attr_scales_.push_back(s);
    }
    if (convention_ != Convention::kRoiScalesSizes) {  // Upsample and Resize-10
      params_.coord = Coord::kAsymmetric;
      params_.nearest = Nearest::kLegacy;
      return;
    }
    const std::string coord = info.GetStringOr("coordinate_transformation_mode", "half_pixel");
    if (coord == "half_pixel")
      params_.coord = Coord::kHalfPixel;
    else if (coord == "half_pixel_symmetric" && opset_ >= 19)
      params_.coord = Coord::kHalfPixelSymmetric;
    else if (coord == "pytorch_half_pixel")
      params_.coord = Coord::kPytorchHalfPixel;
    else if (coord == "align_corners")
      params_.coord = Coord::kAlignCorners;
    else if (coord == "asymmetric")
      params_.coord = Coord::kAsymmetric;
    else if (coord == "tf_half_pixel_for_nn" && opset_ < 13)
      params_.coord = Coord::kTfHalfPixelForNn;
    else if (coord == "tf_crop_and_resize")
      params_.coord = Coord::kTfCropAndResize;
    else
      info.Fail(StrCat("unsupported coordinate_transformation_mode '", coord, "'"));
    const std::string nearest = info.GetStringOr("nearest_mode", "round_prefer_floor");
    if (nearest == "round_prefer_floor")
      params_.nearest = Nearest::kRoundPreferFloor;
    else if (nearest == "round_prefer_ceil")
      params_.nearest = Nearest::kRoundPreferCeil;
    else if (nearest == "floor")
      params_.nearest = Nearest::kFloor;
    else if (nearest == "ceil")
      params_.nearest = Nearest::kCeil;
    else
      info.Fail(StrCat("unsupported nearest_mode '", nearest, "'"));
    params_.cubic_a = info.GetFloatOr("cubic_coeff_a", -0.75f);
    params_.exclude_outside = info.GetIntOr("exclude_outside", 0) != 0;
    params_.extrapolation = info.GetFloatOr("extrapolation_value", 0.0f);
    if (opset_ >= 18) {
      params_.antialias = info.GetIntOr("antialias", 0) != 0;
      axes_ = info.GetIntsOr("axes", {});
      const std::string policy = info.GetStringOr("keep_aspect_ratio_policy", "stretch");
      if (policy == "stretch")
        policy_ = AspectPolicy::kStretch;
      else if (policy == "not_larger")
        policy_ = AspectPolicy::kNotLarger;
      else if (policy == "not_smaller")
        policy_ = AspectPolicy::kNotSmaller;
      else
        info.Fail(StrCat("unsupported keep_aspect_ratio_policy '", policy, "'"));
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const int64_t rank = static_cast<int64_t>(x.rank());
    if (rank == 0) ctx.Fail("input must have rank >= 1");
    // The resized axes.
    std::vector<int64_t> axes;
    if (axes_.empty()) {
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    } else {
      for (int64_t a : axes_) {
        if (a < -rank || a >= rank) ctx.Fail(StrCat("axis ", a, " is out of range for rank ", rank));
        const int64_t n = a < 0 ? a + rank : a;
        if (std::count(axes.begin(), axes.end(), n)) ctx.Fail(StrCat("axis ", a, " is repeated"));
        axes.push_back(n);
      }
    }
    const size_t naxes = axes.size();
    std::vector<double> scales, roi;
    std::vector<int64_t> sizes;
    if (convention_ == Convention::kScalesAttr) {
      scales = attr_scales_;
    } else if (convention_ == Convention::kScalesInput) {
      scales = ReadFloats(ctx, ctx.required_input(1), "scales");
    } else {
      if (const Tensor* t = ctx.input(1); t && t->size() > 0) roi = ReadFloats(ctx, *t, "roi");
      if (const Tensor* t = ctx.input(2); t && t->size() > 0) scales = ReadFloats(ctx, *t, "scales");
      if (const Tensor* t = ctx.input(3); t && t->size() > 0) {
        if (t->dtype() != DataType::kInt64) ctx.Fail("sizes must be int64");
        sizes.assign(t->data<int64_t>(), t->data<int64_t>() + t->size());
      }
      if (scales.empty() == sizes.empty()) ctx.Fail("exactly one of scales and sizes must be given");
    }
    if (!scales.empty() && scales.size() != naxes)
      ctx.Fail(StrCat("scales has ", scales.size(), " values, expected ", naxes));
    if (!sizes.empty() && sizes.size() != naxes)
      ctx.Fail(StrCat("sizes has ", sizes.size(), " values, expected ", naxes));
    if (!roi.empty() && roi.size() != 2 * naxes)
      ctx.Fail(StrCat("roi has ", roi.size(), " values, expected ", 2 * naxes));
    for (double s : scales)
      if (!(s > 0.0) || !std::isfinite(s)) ctx.Fail(StrCat("scales must be positive, got ", s));
    for (int64_t s : sizes)
      if (s < 0) ctx.Fail(StrCat("sizes must be non-negative, got ", s));

    // Per-axis scale and output size, as the reference computes them.
    std::vector<double> scale(static_cast<size_t>(rank), 1.0), roi_start(rank, 0.0), roi_end(rank, 1.0);
    std::vector<float> ort_scale(static_cast<size_t>(rank), 1.0f);  // ORT's float scales (8-bit linear)
    Shape out_shape = x.shape();
    for (size_t i = 0; i < naxes; ++i) {
      const int64_t d = axes[i];
      const double in = static_cast<double>(x.dim(d));
      if (!roi.empty()) roi_start[d] = roi[i], roi_end[d] = roi[naxes + i];
      if (!scales.empty()) {
        ort_scale[d] = static_cast<float>(scales[i]);
        scale[d] = scales[i];
        const double o = std::floor(scales[i] * in);
        if (o > 1e15) ctx.Fail("output is too large");
        out_shape[d] = static_cast<int64_t>(o);
      } else {
        out_shape[d] = sizes[i];
        scale[d] = x.dim(d) > 0 ? static_cast<double>(sizes[i]) / in : 1.0;
        ort_scale[d] = x.dim(d) > 0 ? static_cast<float>(sizes[i]) / static_cast<float>(x.dim(d)) : 1.0f;
      }
    }
    if (!sizes.empty() && policy_ != AspectPolicy::kStretch) {
      double s = policy_ == AspectPolicy::kNotLarger ? std::numeric_limits<double>::infinity() : 0.0;
      for (int64_t d : axes) s = policy_ == AspectPolicy::kNotLarger ? std::min(s, scale[d]) : std::max(s, scale[d]);
      float fs = policy_ == AspectPolicy::kNotLarger ? std::numeric_limits<float>::max() : 0.0f;
      for (int64_t d : axes) fs = policy_ == AspectPolicy::kNotLarger ? std::min(fs, ort_scale[d]) : std::max(fs, ort_scale[d]);
      for (int64_t d : axes) {
        scale[d] = s;
        ort_scale[d] = fs;
        out_shape[d] = static_cast<int64_t>(s * static_cast<double>(x.dim(d)) + 0.5);
      }
    }
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), out_shape);
    if (y.size() == 0) return;
    if (x.size() == 0) ctx.Fail("cannot resize an empty input to a non-empty output");

    std::vector<AxisTaps> taps(static_cast<size_t>(rank));
    for (int64_t d = 0; d < rank; ++d) {
      const bool resized = std::count(axes.begin(), axes.end(), d) != 0;
      if (resized) {
        taps[d] = MakeTaps(params_, x.dim(d), out_shape[d], scale[d], roi_start[d], roi_end[d]);
      } else {
        taps[d] = MakeTaps(ResizeParams{}, x.dim(d), x.dim(d), 1.0, 0.0, 1.0);  // the identity
      }
    }

    if (params_.mode == Mode::kLinear && !params_.antialias &&
        (x.dtype() == DataType::kUInt8 || x.dtype() == DataType::kInt8)) {
      Linear8BitResize r;
      r.dtype = x.dtype();
      r.x = x.raw_data();
      r.y = y.raw_data();
      r.in_dims.assign(x.shape().begin(), x.shape().end());
      r.out_dims.assign(out_shape.begin(), out_shape.end());
      r.scales = ort_scale;
      r.roi.resize(static_cast<size_t>(2 * rank));
      for (int64_t d = 0; d < rank; ++d) {
        r.roi[d] = static_cast<float>(roi_start[d]);
        r.roi[rank + d] = static_cast<float>(roi_end[d]);
      }
      r.coord = params_.coord;
      r.extrapolation = static_cast<float>(params_.extrapolation);
      if (ResizeLinear8Bit(r, ctx.thread_pool())) return;
    }
    if (params_.mode == Mode::kNearest) {
      Dispatch(AllTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        GatherNearest<T>(x.data<T>(), y.data<T>(), x.shape(), taps, params_.extrapolation, ctx.thread_pool());
      });
      return;
    }
    Dispatch(NumericTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      std::vector<double> cur(static_cast<size_t>(x.size())), next;
      for (int64_t i = 0; i < x.size(); ++i) cur[i] = static_cast<double>(ToCompute(x.data<T>()[i]));
      Shape dims = x.shape();
      for (int64_t d = rank; d-- > 0;) {  // innermost axis first, like the reference
        if (taps[d].identity) continue;
        int64_t outer = 1, inner = 1;
        for (int64_t e = 0; e < d; ++e) outer *= dims[e];
        for (int64_t e = d + 1; e < rank; ++e) inner *= dims[e];
        FilterAxis(cur, next, outer, inner, taps[d], params_.extrapolation, ctx.thread_pool());
        cur.swap(next);
        dims[d] = taps[d].out;
      }
      T* py = y.data<T>();
      for (int64_t i = 0; i < y.size(); ++i) py[i] = StoreResized<T>(cur[i]);
    });
  }

 private:
  static std::vector<double> ReadFloats(KernelContext& ctx, const Tensor& t, const char* what) {
    std::vector<double> v;
    if (t.rank() > 1) ctx.Fail(StrCat(what, " must be 1-D"));
    if (!TryDispatch(FloatTypes{}, t.dtype(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          for (int64_t i = 0; i < t.size(); ++i) v.push_back(static_cast<double>(ToCompute(t.data<T>()[i])));
        }))
      ctx.Fail(StrCat(what, " must be a floating-point tensor, got ", DataTypeName(t.dtype())));
    return v;
  }

  Convention convention_;
  int opset_;
  ResizeParams params_;
  std::vector<double> attr_scales_;
  std::vector<int64_t> axes_;
  AspectPolicy policy_ = AspectPolicy::kStretch;
};

template <Convention kConvention>
std::unique_ptr<OpKernel> MakeResize(const KernelInfo& info) {
  return std::make_unique<Resize>(info, kConvention);
}

ONYX_REGISTER_KERNEL_FN("CPU", "", "Upsample", 7, 8, MakeResize<Convention::kScalesAttr>);
ONYX_REGISTER_KERNEL_FN("CPU", "", "Upsample", 9, 10, MakeResize<Convention::kScalesInput>);
ONYX_REGISTER_KERNEL_FN("CPU", "", "Resize", 10, 10, MakeResize<Convention::kScalesInput>);
ONYX_REGISTER_KERNEL_FN("CPU", "", "Resize", 11, 12, MakeResize<Convention::kRoiScalesSizes>);
ONYX_REGISTER_KERNEL_FN("CPU", "", "Resize", 13, 17, MakeResize<Convention::kRoiScalesSizes>);
ONYX_REGISTER_KERNEL_FN("CPU", "", "Resize", 18, 18, MakeResize<Convention::kRoiScalesSizes>);
ONYX_REGISTER_KERNEL_FN("CPU", "", "Resize", 19, kOpsetMax, MakeResize<Convention::kRoiScalesSizes>);

}  // namespace
}  // namespace onyx
