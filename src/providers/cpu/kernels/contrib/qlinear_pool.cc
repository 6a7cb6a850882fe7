// com.microsoft QLinearAveragePool and QLinearGlobalAveragePool on uint8/int8, NCHW or
// channels_last (NHWC), 1-3 spatial dims.
//   QLinearAveragePool: dequantize, average each window in float (count_include_pad divides by
//   the kernel size, else by the in-image count), y = round(avg / y_scale + y_zp) saturated.
//   auto_pad, pads, strides and ceil_mode follow the ONNX pool output-size rules.
//   QLinearGlobalAveragePool: exact int32 sums; y = round((sum - x_zp * size) *
//   (x_scale / (y_scale * size))) + y_zp saturated, as ONNX Runtime's MLAS kernel.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "base/int_math.h"
#include "linalg/q8_pool_sum.h"
#include "platform/thread_pool.h"
#include "providers/cpu/kernels/contrib/qlinear_common.h"
#include "providers/kernel.h"

namespace onyx::contrib {
namespace {

int32_t ByteValue(const uint8_t* p, int64_t i, bool is_signed) {
  return is_signed ? static_cast<int32_t>(static_cast<int8_t>(p[i])) : static_cast<int32_t>(p[i]);
}

uint8_t Store(int32_t v, bool is_signed) {
  return is_signed ? static_cast<uint8_t>(static_cast<int8_t>(std::clamp(v, -128, 127)))
                   : static_cast<uint8_t>(std::clamp(v, 0, 255));
}

// Geometry shared by both pools: N, C and the spatial dims, in either layout.
struct Layout {
  int64_t N = 0, C = 0;
  std::vector<int64_t> spatial;
  bool channels_last = false;
  int64_t image() const {
    int64_t s = 1;
    for (int64_t d : spatial) s *= d;
    return s;
  }
};

Layout ReadLayout(KernelContext& ctx, const Tensor& x, bool channels_last) {
  if (x.rank() < 3 || x.rank() > 5) ctx.Fail("X must have 3 to 5 dimensions (N, C, spatial...)");
  Layout l;
  l.channels_last = channels_last;
  l.N = x.dim(0);
  l.C = channels_last ? x.shape().back() : x.dim(1);
  const size_t first = channels_last ? 1 : 2;
  for (size_t d = first; d < first + x.rank() - 2; ++d) l.spatial.push_back(x.dim(d));
  return l;
}

Shape MakeShape(const Layout& l, const std::vector<int64_t>& spatial) {
  Shape s{l.N};
  if (!l.channels_last) s.push_back(l.C);
  s.insert(s.end(), spatial.begin(), spatial.end());
  if (l.channels_last) s.push_back(l.C);
  return s;
}

class QLinearAveragePool final : public OpKernel {
 public:
  explicit QLinearAveragePool(const KernelInfo& info)
      : kernel_(info.GetInts("kernel_shape")),
        pads_(info.GetIntsOr("pads", {})),
        strides_(info.GetIntsOr("strides", {})),
        auto_pad_(info.GetStringOr("auto_pad", "NOTSET")),
        ceil_mode_(info.GetIntOr("ceil_mode", 0) != 0),
        count_include_pad_(info.GetIntOr("count_include_pad", 0) != 0),
        channels_last_(info.GetIntOr("channels_last", 0) != 0) {
    const size_t r = kernel_.size();
    if (r == 0 || r > 3) info.Fail("kernel_shape must have 1 to 3 values");
    if (strides_.empty()) strides_.assign(r, 1);
    if (pads_.empty()) pads_.assign(2 * r, 0);
    if (strides_.size() != r || pads_.size() != 2 * r) info.Fail("strides and pads must match kernel_shape's rank");
    for (size_t i = 0; i < r; ++i)
      if (kernel_[i] <= 0 || strides_[i] <= 0 || pads_[i] < 0 || pads_[i + r] < 0 || pads_[i] >= kernel_[i] ||
          pads_[i + r] >= kernel_[i])
        info.Fail("kernel_shape and strides must be positive, pads in [0, kernel)");
    if (auto_pad_ != "NOTSET" && auto_pad_ != "VALID" && auto_pad_ != "SAME_UPPER" && auto_pad_ != "SAME_LOWER")
      info.Fail(StrCat("unknown auto_pad '", auto_pad_, "'"));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const DataType dt = x.dtype();
    if (dt != DataType::kUInt8 && dt != DataType::kInt8) ctx.Fail("X must be uint8 or int8");
    const float sx = ScalarFloat(ctx, 1, "x_scale"), sy = ScalarFloat(ctx, 3, "y_scale");
    const int32_t zx = ZeroPoint(ctx, 2, dt, "x_zero_point"), zy = ZeroPoint(ctx, 4, dt, "y_zero_point");
    const Layout l = ReadLayout(ctx, x, channels_last_);
    const size_t r = kernel_.size();
    if (l.spatial.size() != r) ctx.Fail(StrCat("kernel_shape has ", r, " values for ", l.spatial.size(), " spatial dims"));
    std::vector<int64_t> out(r), head(r);
    for (size_t i = 0; i < r; ++i) {
      const int64_t in = l.spatial[i], k = kernel_[i], s = strides_[i];
      if (auto_pad_ == "SAME_UPPER" || auto_pad_ == "SAME_LOWER") {
        out[i] = (in + s - 1) / s;
        const int64_t need = std::max<int64_t>(0, (out[i] - 1) * s + k - in);
        head[i] = auto_pad_ == "SAME_UPPER" ? need / 2 : (need + 1) / 2;
      } else {
        const int64_t pb = auto_pad_ == "VALID" ? 0 : pads_[i], pe = auto_pad_ == "VALID" ? 0 : pads_[i + r];
        head[i] = pb;
        const int64_t span = in + pb + pe - k;
        if (span < 0) ctx.Fail("the kernel is larger than the padded input");
        out[i] = (ceil_mode_ ? (span + s - 1) / s : span / s) + 1;
        if (ceil_mode_ && (out[i] - 1) * s >= in + pb) --out[i];  // no window may start in the end padding
      }
    }
    Tensor& y = ctx.AllocateOutput(0, dt, MakeShape(l, out));
    const bool is_signed = dt == DataType::kInt8;
    const uint8_t* xd = static_cast<const uint8_t*>(x.raw_data());
    uint8_t* yd = static_cast<uint8_t*>(y.raw_data());
    // Pad the spatial dims to 3 so one loop nest serves 1-D to 3-D.
    std::vector<int64_t> in3(3, 1), out3(3, 1), k3(3, 1), s3(3, 1), h3(3, 0);
    for (size_t i = 0; i < r; ++i) {
      in3[3 - r + i] = l.spatial[i];
      out3[3 - r + i] = out[i];
      k3[3 - r + i] = kernel_[i];
      s3[3 - r + i] = strides_[i];
      h3[3 - r + i] = head[i];
    }
    const int64_t in_image = l.image(), out_image = out3[0] * out3[1] * out3[2];
    const int64_t kernel_size = k3[0] * k3[1] * k3[2];
    // Element (n, c, spatial index p) of X / Y.
    auto x_at = [&](int64_t n, int64_t c, int64_t p) {
      return l.channels_last ? (n * in_image + p) * l.C + c : (n * l.C + c) * in_image + p;
    };
    auto y_at = [&](int64_t n, int64_t c, int64_t p) {
      return l.channels_last ? (n * out_image + p) * l.C + c : (n * l.C + c) * out_image + p;
    };
    ThreadPool::For(ctx.thread_pool(), l.N * l.C, 2.0 * out_image * kernel_size, [&](int64_t begin, int64_t end) {
      for (int64_t nc = begin; nc < end; ++nc) {
        const int64_t n = nc / l.C, c = nc % l.C;
        for (int64_t o0 = 0; o0 < out3[0]; ++o0)
          for (int64_t o1 = 0; o1 < out3[1]; ++o1)
            for (int64_t o2 = 0; o2 < out3[2]; ++o2) {
              int64_t lo[3], hi[3];
              const int64_t o[3] = {o0, o1, o2};
              for (int d = 0; d < 3; ++d) {
                const int64_t start = o[d] * s3[d] - h3[d];
                hi[d] = std::min(start + k3[d], in3[d]);
                lo[d] = std::max<int64_t>(start, 0);
              }
              float sum = 0.0f;
              for (int64_t i0 = lo[0]; i0 < hi[0]; ++i0)
                for (int64_t i1 = lo[1]; i1 < hi[1]; ++i1)
                  for (int64_t i2 = lo[2]; i2 < hi[2]; ++i2) {
                    const int64_t p = (i0 * in3[1] + i1) * in3[2] + i2;
                    sum += sx * static_cast<float>(ByteValue(xd, x_at(n, c, p), is_signed) - zx);
                  }
              const int64_t count =
                  count_include_pad_ ? kernel_size : (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
              const float avg = count > 0 ? sum / static_cast<float>(count) : 0.0f;
              const float v = std::nearbyint(avg / sy + static_cast<float>(zy));
              const float lim_lo = is_signed ? -128.0f : 0.0f, lim_hi = is_signed ? 127.0f : 255.0f;
              yd[y_at(n, c, (o0 * out3[1] + o1) * out3[2] + o2)] =
                  Store(static_cast<int32_t>(std::clamp(v, lim_lo, lim_hi)), is_signed);
            }
      }
    });
  }

 private:
  std::vector<int64_t> kernel_, pads_, strides_;
  std::string auto_pad_;
  bool ceil_mode_, count_include_pad_, channels_last_;
};

class QLinearGlobalAveragePool final : public OpKernel {
 public:
  explicit QLinearGlobalAveragePool(const KernelInfo& info) : channels_last_(info.GetIntOr("channels_last", 0) != 0) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const DataType dt = x.dtype();
    if (dt != DataType::kUInt8 && dt != DataType::kInt8) ctx.Fail("X must be uint8 or int8");
    const float sx = ScalarFloat(ctx, 1, "x_scale"), sy = ScalarFloat(ctx, 3, "y_scale");
    const int32_t zx = ZeroPoint(ctx, 2, dt, "x_zero_point"), zy = ZeroPoint(ctx, 4, dt, "y_zero_point");
    if (x.rank() < 3) ctx.Fail("X must have rank >= 3");
    Layout l;
    l.channels_last = channels_last_;
    l.N = x.dim(0);
    l.C = channels_last_ ? x.shape().back() : x.dim(1);
    const size_t first = channels_last_ ? 1 : 2;
    for (size_t d = first; d < first + x.rank() - 2; ++d) l.spatial.push_back(x.dim(d));
    Tensor& y = ctx.AllocateOutput(0, dt, MakeShape(l, std::vector<int64_t>(l.spatial.size(), 1)));
    const int64_t image = l.image();
    if (image == 0 || y.size() == 0) return;
    const float scale = sx / (sy * static_cast<float>(image));
    const bool is_signed = dt == DataType::kInt8;
    const uint8_t* xd = static_cast<const uint8_t*>(x.raw_data());
    uint8_t* yd = static_cast<uint8_t*>(y.raw_data());
    if (channels_last_) {
      // Blocks of channels, pixel rows read in order (a channel's pixels lie C codes apart).
      constexpr int64_t kBlock = 64;
      const int64_t blocks = CeilDiv(l.C, kBlock);
      ThreadPool::For(ctx.thread_pool(), l.N * blocks, 1.0 * image * kBlock, [&](int64_t begin, int64_t end) {
        for (int64_t nb = begin; nb < end; ++nb) {
          const int64_t n = nb / blocks, c0 = (nb % blocks) * kBlock, count = std::min(kBlock, l.C - c0);
          int32_t acc[kBlock];
          std::fill_n(acc, count, -zx * static_cast<int32_t>(image));
          for (int64_t p = 0; p < image; ++p) {
            const uint8_t* row = xd + (n * image + p) * l.C + c0;
            if (is_signed) {
              for (int64_t c = 0; c < count; ++c) acc[c] += static_cast<int8_t>(row[c]);
            } else {
              for (int64_t c = 0; c < count; ++c) acc[c] += row[c];
            }
          }
          for (int64_t c = 0; c < count; ++c) {
            const int32_t q = static_cast<int32_t>(std::nearbyint(static_cast<float>(acc[c]) * scale)) + zy;
            yd[n * l.C + c0 + c] = Store(q, is_signed);
          }
        }
      });
      return;
    }
    // A channel's image is contiguous: linalg's plane sums (vpsadbw, 64 codes an instruction)
    // for a block of channels, then the rounding. Cost per channel: the rounding and store plus
    // its codes at about 16 a cycle.
    const double channel_cost = 12.0 + static_cast<double>(image) / 16.0;
    ThreadPool::For(ctx.thread_pool(), l.N * l.C, channel_cost, [&](int64_t begin, int64_t end) {
      constexpr int64_t kBlock = 256;
      int32_t sums[kBlock];
      for (int64_t c0 = begin; c0 < end; c0 += kBlock) {
        const int64_t count = std::min(kBlock, end - c0);
        if (is_signed) linalg::Q8PlaneSumsS8(reinterpret_cast<const int8_t*>(xd) + c0 * image, count, image, sums);
        else linalg::Q8PlaneSumsU8(xd + c0 * image, count, image, sums);
        for (int64_t c = 0; c < count; ++c) {
          const int32_t acc = sums[c] - zx * static_cast<int32_t>(image);
          const int32_t q = static_cast<int32_t>(std::nearbyint(static_cast<float>(acc) * scale)) + zy;
          yd[c0 + c] = Store(q, is_signed);
        }
      }
    });
  }

 private:
  bool channels_last_;
};

ONYX_REGISTER_KERNEL("CPU", "com.microsoft", "QLinearAveragePool", 1, kOpsetMax, QLinearAveragePool);
ONYX_REGISTER_KERNEL("CPU", "com.microsoft", "QLinearGlobalAveragePool", 1, kOpsetMax, QLinearGlobalAveragePool);

}  // namespace
}  // namespace onyx::contrib
