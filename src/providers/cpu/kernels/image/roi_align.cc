// RoiAlign (opsets 10, 16, 22): pools each region of interest of X [N, C, H, W] into
// [output_height, output_width] bins, each the average (or max) of bilinear samples on a regular
// sampling_ratio x sampling_ratio grid (adaptive ceil(bin size) when 0).
// rois [R, 4] are (x1, y1, x2, y2) in input coordinates times spatial_scale; batch_indices [R].
// Opset 10 behaves as coordinate_transformation_mode "output_half_pixel" (no half-pixel shift,
// regions at least 1 pixel); 16 adds the mode with default "half_pixel". Max mode takes, per
// sample, the largest of its four weighted corner values, as ONNX Runtime does.
#include <algorithm>
#include <cmath>
#include <vector>

#include "base/type_traits.h"
#include "platform/thread_pool.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

constexpr double kMaxSamples = double(1 << 26);  // per region; beyond this the rois are nonsense

struct Sample {
  int64_t o[4] = {0, 0, 0, 0};  // offsets of the four corners in the H x W plane
  double w[4] = {0, 0, 0, 0};
};

class RoiAlign final : public OpKernel {
 public:
  explicit RoiAlign(const KernelInfo& info)
      : out_h_(info.GetIntOr("output_height", 1)),
        out_w_(info.GetIntOr("output_width", 1)),
        sampling_ratio_(info.GetIntOr("sampling_ratio", 0)),
        spatial_scale_(info.GetFloatOr("spatial_scale", 1.0f)) {
    const std::string mode = info.GetStringOr("mode", "avg");
    if (mode == "avg")
      max_ = false;
    else if (mode == "max")
      max_ = true;
    else
      info.Fail(StrCat("mode must be avg or max, got '", mode, "'"));
    const std::string coord =
        info.opset() >= 16 ? info.GetStringOr("coordinate_transformation_mode", "half_pixel") : "output_half_pixel";
    if (coord == "half_pixel")
      half_pixel_ = true;
    else if (coord == "output_half_pixel")
      half_pixel_ = false;
    else
      info.Fail(StrCat("unsupported coordinate_transformation_mode '", coord, "'"));
    if (out_h_ <= 0 || out_w_ <= 0) info.Fail("output_height and output_width must be positive");
    if (sampling_ratio_ < 0) info.Fail("sampling_ratio must be >= 0");
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& rois = ctx.required_input(1);
    const Tensor& batch = ctx.required_input(2);
    if (x.rank() != 4) ctx.Fail("X must be [N, C, H, W]");
    if (rois.rank() != 2 || rois.dim(1) != 4) ctx.Fail("rois must be [num_rois, 4]");
    if (batch.rank() != 1 || batch.dim(0) != rois.dim(0)) ctx.Fail("batch_indices must be [num_rois]");
    if (rois.dtype() != x.dtype()) ctx.Fail("rois must have X's element type");
    const int64_t n = x.dim(0), channels = x.dim(1), height = x.dim(2), width = x.dim(3), num_rois = rois.dim(0);
    if (height == 0 || width == 0) ctx.Fail("X must have non-empty spatial dims");
    std::vector<int64_t> batch_idx(static_cast<size_t>(num_rois));
    for (int64_t i = 0; i < num_rois; ++i) {
      if (batch.dtype() == DataType::kInt64)
        batch_idx[i] = batch.data<int64_t>()[i];
      else if (batch.dtype() == DataType::kInt32)
        batch_idx[i] = batch.data<int32_t>()[i];
      else
        ctx.Fail("batch_indices must be int64");
      if (batch_idx[i] < 0 || batch_idx[i] >= n)
        ctx.Fail(StrCat("batch index ", batch_idx[i], " is outside [0, ", n, ")"));
    }
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), {num_rois, channels, out_h_, out_w_});
    if (y.size() == 0) return;
    Dispatch(FloatTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      const T* pr = rois.data<T>();
      T* py = y.data<T>();
      ThreadPool::For(
          ctx.thread_pool(), num_rois, static_cast<double>(channels * out_h_ * out_w_) * 40.0,
          [&](int64_t begin, int64_t end) {
            std::vector<Sample> samples;
            for (int64_t r = begin; r < end; ++r) {
              const double offset = half_pixel_ ? 0.5 : 0.0;
              const double x1 = static_cast<double>(ToCompute(pr[r * 4 + 0])) * spatial_scale_ - offset;
              const double y1 = static_cast<double>(ToCompute(pr[r * 4 + 1])) * spatial_scale_ - offset;
              const double x2 = static_cast<double>(ToCompute(pr[r * 4 + 2])) * spatial_scale_ - offset;
              const double y2 = static_cast<double>(ToCompute(pr[r * 4 + 3])) * spatial_scale_ - offset;
              double roi_w = x2 - x1, roi_h = y2 - y1;
              if (!half_pixel_) roi_w = std::max(roi_w, 1.0), roi_h = std::max(roi_h, 1.0);
              const double bin_h = roi_h / static_cast<double>(out_h_), bin_w = roi_w / static_cast<double>(out_w_);
              const double gh = sampling_ratio_ > 0 ? sampling_ratio_ : std::ceil(roi_h / static_cast<double>(out_h_));
              const double gw = sampling_ratio_ > 0 ? sampling_ratio_ : std::ceil(roi_w / static_cast<double>(out_w_));
              if (!(gh * gw * static_cast<double>(out_h_ * out_w_) < kMaxSamples))
                ctx.Fail("region of interest needs too many samples (bad rois or spatial_scale?)");
              const int64_t grid_h = std::max<int64_t>(static_cast<int64_t>(gh), 0);
              const int64_t grid_w = std::max<int64_t>(static_cast<int64_t>(gw), 0);
              const double count = static_cast<double>(std::max<int64_t>(grid_h * grid_w, 1));
              // Bilinear corners and weights of every sample of every bin (shared by all channels).
              samples.clear();
              for (int64_t ph = 0; ph < out_h_; ++ph)
                for (int64_t pw = 0; pw < out_w_; ++pw)
                  for (int64_t iy = 0; iy < grid_h; ++iy) {
                    const double yy = y1 + ph * bin_h + (iy + 0.5) * bin_h / static_cast<double>(grid_h);
                    for (int64_t ix = 0; ix < grid_w; ++ix) {
                      const double xx = x1 + pw * bin_w + (ix + 0.5) * bin_w / static_cast<double>(grid_w);
                      samples.push_back(Bilinear(yy, xx, height, width));
                    }
                  }
              const int64_t per_bin = grid_h * grid_w;
              for (int64_t c = 0; c < channels; ++c) {
                const T* plane = px + (batch_idx[r] * channels + c) * height * width;
                T* out = py + (r * channels + c) * out_h_ * out_w_;
                for (int64_t b = 0; b < out_h_ * out_w_; ++b) {
                  double acc = 0.0;
                  bool first = true;
                  for (int64_t s = b * per_bin; s < (b + 1) * per_bin; ++s) {
                    const Sample& sm = samples[s];
                    double v[4];
                    for (int k = 0; k < 4; ++k) v[k] = sm.w[k] * static_cast<double>(ToCompute(plane[sm.o[k]]));
                    if (!max_) {
                      acc += v[0] + v[1] + v[2] + v[3];
                    } else {
                      const double m = std::max(std::max(v[0], v[1]), std::max(v[2], v[3]));
                      acc = first ? m : std::max(acc, m);
                      first = false;
                    }
                  }
                  if (!max_) acc /= count;
                  out[b] = FromCompute<T>(static_cast<ComputeType<T>>(acc));
                }
              }
            }
          });
    });
  }

 private:
  // The four corners around (y, x) with their weights; all-zero weights when far outside.
  static Sample Bilinear(double y, double x, int64_t height, int64_t width) {
    Sample s;
    if (!(y >= -1.0 && y <= static_cast<double>(height) && x >= -1.0 && x <= static_cast<double>(width)))
      return s;  // outside (or NaN): contributes zero
    y = std::max(y, 0.0);
    x = std::max(x, 0.0);
    int64_t y_low = static_cast<int64_t>(y), x_low = static_cast<int64_t>(x), y_high, x_high;
    if (y_low >= height - 1)
      y_high = y_low = height - 1, y = static_cast<double>(y_low);
    else
      y_high = y_low + 1;
    if (x_low >= width - 1)
      x_high = x_low = width - 1, x = static_cast<double>(x_low);
    else
      x_high = x_low + 1;
    const double ly = y - y_low, lx = x - x_low, hy = 1.0 - ly, hx = 1.0 - lx;
    s.o[0] = y_low * width + x_low, s.o[1] = y_low * width + x_high;
    s.o[2] = y_high * width + x_low, s.o[3] = y_high * width + x_high;
    s.w[0] = hy * hx, s.w[1] = hy * lx, s.w[2] = ly * hx, s.w[3] = ly * lx;
    return s;
  }

  int64_t out_h_;
  int64_t out_w_;
  int64_t sampling_ratio_;
  double spatial_scale_;
  bool max_ = false;
  bool half_pixel_ = true;
};

ONYX_CPU_KERNEL("RoiAlign", 10, 15, RoiAlign);
ONYX_CPU_KERNEL("RoiAlign", 16, 21, RoiAlign);
ONYX_CPU_KERNEL("RoiAlign", 22, kOpsetMax, RoiAlign);

}  // namespace
}  // namespace onyx
