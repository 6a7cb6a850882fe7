// ONNX Runtime's 8-bit linear Resize paths (see resize_linear_8bit.h). Every float expression here
// keeps ORT's operand order and precision: a different order or a double intermediate moves a
// sum across an integer and changes the truncated code.
#include "providers/cpu/kernels/image/resize_linear_8bit.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "platform/thread_pool.h"

namespace onyx {
namespace {

// ORT's coordinate functions, in float (half_pixel_symmetric and tf_crop_and_resize's
// single-output case go through double, as ORT's do).
float OrtCoordinate(ResizeCoord mode, float x, float scale, float out_len, float in_len, float roi_start,
                    float roi_end) {
  switch (mode) {
    case ResizeCoord::kAsymmetric:
      return x / scale;
    case ResizeCoord::kPytorchHalfPixel:
      return out_len > 1 ? (x + 0.5f) / scale - 0.5f : 0.0f;
    case ResizeCoord::kTfHalfPixelForNn:
      return (x + 0.5f) / scale;
    case ResizeCoord::kAlignCorners:
      return out_len == 1 ? 0.0f : x * (in_len - 1) / (out_len - 1);
    case ResizeCoord::kTfCropAndResize:
      if (out_len > 1) return roi_start * (in_len - 1) + (x * (roi_end - roi_start) * (in_len - 1)) / (out_len - 1);
      return static_cast<float>(0.5 * (roi_start + roi_end) * (in_len - 1));
    case ResizeCoord::kHalfPixelSymmetric: {
      const float output_width = scale * in_len;
      const float adjustment = out_len / output_width;
      const float center = in_len / 2;
      const float offset = center * (1 - adjustment);
      return static_cast<float>(offset + (x + 0.5) / scale - 0.5);
    }
    case ResizeCoord::kHalfPixel:
      break;
  }
  return ((x + 0.5f) / scale) - 0.5f;
}

// One resized axis: the two input taps of each output, their float weights (d1 toward the second
// tap) and the same weights in 1/1024 steps, and the unclamped coordinate (for extrapolation).
struct LinearAxis {
  std::vector<float> original, d1, d2;
  std::vector<int32_t> i1, i2, d1_10, d2_10;
};

LinearAxis MakeAxis(const Linear8BitResize& r, size_t axis) {
  const int32_t in = static_cast<int32_t>(r.in_dims[axis]);
  const int32_t out = static_cast<int32_t>(r.out_dims[axis]);
  const float scale = r.scales[axis];
  const size_t rank = r.in_dims.size();
  LinearAxis a;
  for (int32_t j = 0; j < out; ++j) {
    float c = scale == 1 ? static_cast<float>(j)
                         : OrtCoordinate(r.coord, static_cast<float>(j), scale, static_cast<float>(out),
                                         static_cast<float>(in), r.roi[axis], r.roi[rank + axis]);
    a.original.push_back(c);
    c = std::max(0.0f, std::min(c, static_cast<float>(in - 1)));
    const int32_t c_10 = static_cast<int32_t>(c * (1 << 10));
    const int32_t t1 = std::min(static_cast<int32_t>(c), in - 1);
    const int32_t t2 = std::min(t1 + 1, in - 1);
    a.i1.push_back(t1);
    a.i2.push_back(t2);
    // Both taps the same pixel (the last one): ORT weighs them a half each.
    a.d1.push_back(t1 == t2 ? 0.5f : std::fabs(c - static_cast<float>(t1)));
    a.d2.push_back(t1 == t2 ? 0.5f : std::fabs(c - static_cast<float>(t2)));
    a.d1_10.push_back(t1 == t2 ? 512 : std::abs(c_10 - t1 * (1 << 10)));
    a.d2_10.push_back(t1 == t2 ? 512 : std::abs(c_10 - t2 * (1 << 10)));
  }
  return a;
}

// static_cast<T>(float) as ORT's x86 build executes it: truncation to int32, then the low byte.
template <typename T>
T CastLikeOrt(float v) {
  if (!(v > -2147483648.0f && v < 2147483648.0f)) return T(0);
  return static_cast<T>(static_cast<int32_t>(v));
}

bool Outside(const LinearAxis& a, int64_t j, int64_t in) {
  return a.original[j] < 0 || a.original[j] > static_cast<float>(in - 1);
}

// NCHW / 2-D: planes of [in_h, in_w] into [out_h, out_w], four float weights.
template <typename T>
void BilinearPlanes(const Linear8BitResize& r, int64_t planes, size_t h_axis, ThreadPool* pool) {
  const size_t w_axis = h_axis + 1;
  const int64_t in_h = r.in_dims[h_axis], in_w = r.in_dims[w_axis];
  const int64_t out_h = r.out_dims[h_axis], out_w = r.out_dims[w_axis];
  const LinearAxis ay = MakeAxis(r, h_axis), ax = MakeAxis(r, w_axis);
  const bool extrapolate = r.coord == ResizeCoord::kTfCropAndResize;
  const T fill = CastLikeOrt<T>(r.extrapolation);
  const T* x = static_cast<const T*>(r.x);
  T* y = static_cast<T*>(r.y);
  ThreadPool::For(pool, planes * out_h, static_cast<double>(out_w) * 8.0, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t p = row / out_h, oy = row % out_h;
      const T* src = x + p * in_h * in_w;
      T* dst = y + row * out_w;
      if (extrapolate && Outside(ay, oy, in_h)) {
        std::fill(dst, dst + out_w, fill);
        continue;
      }
      const T* top = src + ay.i1[oy] * in_w;
      const T* bottom = src + ay.i2[oy] * in_w;
      const float dy1 = ay.d1[oy], dy2 = ay.d2[oy];
      for (int64_t ox = 0; ox < out_w; ++ox) {
        if (extrapolate && Outside(ax, ox, in_w)) {
          dst[ox] = fill;
          continue;
        }
        const float dx1 = ax.d1[ox], dx2 = ax.d2[ox];
        const int32_t x1 = ax.i1[ox], x2 = ax.i2[ox];
        const float v = dx2 * dy2 * static_cast<float>(top[x1]) + dx1 * dy2 * static_cast<float>(top[x2]) +
                        dx2 * dy1 * static_cast<float>(bottom[x1]) + dx1 * dy1 * static_cast<float>(bottom[x2]);
        dst[ox] = CastLikeOrt<T>(v);
      }
    }
  });
}

// NHWC: [batch, in_h, in_w, channels] with H and W resized, integer weights (2^20 in all).
template <typename T>
void BilinearNhwcInteger(const Linear8BitResize& r, ThreadPool* pool) {
  const int64_t batch = r.in_dims[0], in_h = r.in_dims[1], in_w = r.in_dims[2], channels = r.in_dims[3];
  const int64_t out_h = r.out_dims[1], out_w = r.out_dims[2];
  const LinearAxis ay = MakeAxis(r, 1), ax = MakeAxis(r, 2);
  const bool extrapolate = r.coord == ResizeCoord::kTfCropAndResize;
  const T fill = CastLikeOrt<T>(r.extrapolation);
  const T* x = static_cast<const T*>(r.x);
  T* y = static_cast<T*>(r.y);
  ThreadPool::For(pool, batch * out_h * out_w, static_cast<double>(channels) * 4.0, [&](int64_t begin, int64_t end) {
    for (int64_t pixel = begin; pixel < end; ++pixel) {
      const int64_t n = pixel / (out_h * out_w), oy = pixel / out_w % out_h, ox = pixel % out_w;
      T* dst = y + pixel * channels;
      if (extrapolate && (Outside(ay, oy, in_h) || Outside(ax, ox, in_w))) {
        std::fill(dst, dst + channels, fill);
        continue;
      }
      const T* src = x + n * in_h * in_w * channels;
      const T* p11 = src + (ay.i1[oy] * in_w + ax.i1[ox]) * channels;
      const T* p21 = src + (ay.i1[oy] * in_w + ax.i2[ox]) * channels;
      const T* p12 = src + (ay.i2[oy] * in_w + ax.i1[ox]) * channels;
      const T* p22 = src + (ay.i2[oy] * in_w + ax.i2[ox]) * channels;
      const int32_t w11 = ax.d2_10[ox] * ay.d2_10[oy], w21 = ax.d1_10[ox] * ay.d2_10[oy];
      const int32_t w12 = ax.d2_10[ox] * ay.d1_10[oy], w22 = ax.d1_10[ox] * ay.d1_10[oy];
      for (int64_t c = 0; c < channels; ++c) {
        const int32_t sum = w11 * p11[c] + w21 * p21[c] + w12 * p12[c] + w22 * p22[c];
        dst[c] = static_cast<T>(sum / (1 << 20));  // C++ division truncates toward zero, as ORT's
      }
    }
  });
}

// 3-D / NCDHW: volumes of [in_d, in_h, in_w], eight float weights.
template <typename T>
void TrilinearVolumes(const Linear8BitResize& r, int64_t volumes, size_t d_axis, ThreadPool* pool) {
  const int64_t in_d = r.in_dims[d_axis], in_h = r.in_dims[d_axis + 1], in_w = r.in_dims[d_axis + 2];
  const int64_t out_d = r.out_dims[d_axis], out_h = r.out_dims[d_axis + 1], out_w = r.out_dims[d_axis + 2];
  const LinearAxis az = MakeAxis(r, d_axis), ay = MakeAxis(r, d_axis + 1), ax = MakeAxis(r, d_axis + 2);
  const bool extrapolate = r.coord == ResizeCoord::kTfCropAndResize;
  const T fill = CastLikeOrt<T>(r.extrapolation);
  const T* x = static_cast<const T*>(r.x);
  T* y = static_cast<T*>(r.y);
  ThreadPool::For(pool, volumes * out_d * out_h, static_cast<double>(out_w) * 16.0, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t v = row / (out_d * out_h), oz = row / out_h % out_d, oy = row % out_h;
      const T* src = x + v * in_d * in_h * in_w;
      T* dst = y + row * out_w;
      const int64_t plane = in_h * in_w;
      const T* z1 = src + az.i1[oz] * plane;
      const T* z2 = src + az.i2[oz] * plane;
      const int64_t y1 = ay.i1[oy] * in_w, y2 = ay.i2[oy] * in_w;
      const float dz1 = az.d1[oz], dz2 = az.d2[oz], dy1 = ay.d1[oy], dy2 = ay.d2[oy];
      for (int64_t ox = 0; ox < out_w; ++ox) {
        if (extrapolate && (Outside(az, oz, in_d) || Outside(ay, oy, in_h) || Outside(ax, ox, in_w))) {
          dst[ox] = fill;
          continue;
        }
        const float dx1 = ax.d1[ox], dx2 = ax.d2[ox];
        const int32_t x1 = ax.i1[ox], x2 = ax.i2[ox];
        const float value = dx2 * dy2 * dz2 * static_cast<float>(z1[y1 + x1]) +
                            dx1 * dy2 * dz2 * static_cast<float>(z1[y1 + x2]) +
                            dx2 * dy1 * dz2 * static_cast<float>(z1[y2 + x1]) +
                            dx1 * dy1 * dz2 * static_cast<float>(z1[y2 + x2]) +
                            dx2 * dy2 * dz1 * static_cast<float>(z2[y1 + x1]) +
                            dx1 * dy2 * dz1 * static_cast<float>(z2[y1 + x2]) +
                            dx2 * dy1 * dz1 * static_cast<float>(z2[y2 + x1]) +
                            dx1 * dy1 * dz1 * static_cast<float>(z2[y2 + x2]);
        dst[ox] = CastLikeOrt<T>(value);
      }
    }
  });
}

enum class Path { kNone, kPlanes, kNhwc, kVolumes };

// Which of ORT's paths takes this rank and these scales (ORT rejects the others).
Path ChoosePath(const Linear8BitResize& r) {
  const auto& s = r.scales;
  switch (r.in_dims.size()) {
    case 2:
      return Path::kPlanes;
    case 3:
      return Path::kVolumes;
    case 4:
      if (s[0] != 1) return Path::kNone;
      if (s[1] == 1) return Path::kPlanes;
      return s[3] == 1 ? Path::kNhwc : Path::kNone;
    case 5:
      return s[0] == 1 && s[1] == 1 ? Path::kVolumes : Path::kNone;
    default:
      return Path::kNone;
  }
}

template <typename T>
void Run(const Linear8BitResize& r, Path path, ThreadPool* pool) {
  const auto& d = r.in_dims;
  switch (path) {
    case Path::kPlanes:
      BilinearPlanes<T>(r, d.size() == 2 ? 1 : d[0] * d[1], d.size() - 2, pool);
      break;
    case Path::kNhwc:
      BilinearNhwcInteger<T>(r, pool);
      break;
    case Path::kVolumes:
      TrilinearVolumes<T>(r, d.size() == 3 ? 1 : d[0] * d[1], d.size() - 3, pool);
      break;
    case Path::kNone:
      break;
  }
}

}  // namespace

bool ResizeLinear8Bit(const Linear8BitResize& r, ThreadPool* pool) {
  const Path path = ChoosePath(r);
  if (path == Path::kNone) return false;
  if (r.in_dims == r.out_dims) {  // ORT copies whenever the shape is unchanged, whatever the scales
    int64_t n = 1;
    for (int64_t v : r.in_dims) n *= v;
    std::memcpy(r.y, r.x, static_cast<size_t>(n));
    return true;
  }
  if (r.dtype == DataType::kUInt8)
    Run<uint8_t>(r, path, pool);
  else
    Run<int8_t>(r, path, pool);
  return true;
}

}  // namespace onyx
