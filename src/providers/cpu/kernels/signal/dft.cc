// DFT (opset 17: axis attribute; opset 20: axis input) and STFT (opset 17), on any length
// through FftPlan (radix-2 or Bluestein). Real or complex input ([..., 1] or [..., 2]);
// onesided forward output keeps n/2+1 bins; an inverse onesided DFT is the real inverse of a
// Hermitian half spectrum (irfft). Arithmetic runs in double; results round once.
#include <algorithm>
#include <cmath>
#include <vector>

#include "base/type_traits.h"
#include "platform/thread_pool.h"
#include "providers/cpu/kernels/signal/fft.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

using signal::Complex;
using signal::FftPlan;

// A scalar (or one-element) int32/int64 input.
int64_t ReadScalarInt(KernelContext& ctx, const Tensor& t, const char* name) {
  if (t.size() != 1 || t.rank() > 1) ctx.Fail(StrCat("'", name, "' must be a scalar, got ", t.Describe()));
  if (t.dtype() == DataType::kInt64) return t.data<int64_t>()[0];
  if (t.dtype() == DataType::kInt32) return t.data<int32_t>()[0];
  ctx.Fail(StrCat("'", name, "' must be int32 or int64, got ", t.Describe()));
}

template <typename T>
double ToDouble(T v) {
  return static_cast<double>(ToCompute(v));
}

template <typename T>
T FromDouble(double v) {
  return FromCompute<T>(static_cast<ComputeType<T>>(v));
}

class Dft final : public OpKernel {
 public:
  explicit Dft(const KernelInfo& info)
      : axis_from_input_(info.opset() >= 20),
        axis_attr_(info.GetIntOr("axis", 1)),
        inverse_(info.GetIntOr("inverse", 0) != 0),
        onesided_(info.GetIntOr("onesided", 0) != 0) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const int64_t rank = static_cast<int64_t>(x.rank());
    if (rank < 2 || (x.dim(rank - 1) != 1 && x.dim(rank - 1) != 2))
      ctx.Fail(StrCat("input must be [batch, signal dims..., 1 or 2], got ", x.Describe()));
    int64_t axis = axis_attr_;
    if (axis_from_input_) {
      axis = -2;  // opset 20 default: the last signal axis
      if (const Tensor* a = ctx.input(2)) axis = ReadScalarInt(ctx, *a, "axis");
    }
    if (axis < 0) axis += rank;
    if (axis < 0 || axis > rank - 2)
      ctx.Fail(StrCat("axis must be in [-", rank, ", -2] or [0, ", rank - 2, "] for rank ", rank));
    const int64_t in_len = x.dim(axis);
    int64_t n = inverse_ && onesided_ ? 2 * (in_len - 1) : in_len;
    if (const Tensor* len = ctx.input(1)) n = ReadScalarInt(ctx, *len, "dft_length");
    if (n < 1) ctx.Fail(StrCat("the DFT length must be positive, got ", n));
    const int64_t out_len = !inverse_ && onesided_ ? n / 2 + 1 : n;
    const int64_t out_last = inverse_ && onesided_ ? 1 : 2;
    Shape out_shape = x.shape();
    out_shape[axis] = out_len;
    out_shape.back() = out_last;
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), out_shape);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
    for (int64_t d = axis + 1; d < rank - 1; ++d) inner *= x.dim(d);
    const int64_t cin = x.dim(rank - 1);
    const FftPlan plan(n);
    Dispatch(FloatTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      const double cost = 10.0 * static_cast<double>(n) * std::log2(static_cast<double>(n) + 1.0);
      ThreadPool::For(ctx.thread_pool(), outer * inner, cost, [&](int64_t begin, int64_t end) {
        std::vector<Complex> buf(static_cast<size_t>(n)), scratch;
        for (int64_t line = begin; line < end; ++line) {
          const int64_t o = line / inner, i = line % inner;
          auto in_at = [&](int64_t k) {
            const T* p = xp + ((o * in_len + k) * inner + i) * cin;
            return Complex(ToDouble(p[0]), cin == 2 ? ToDouble(p[1]) : 0.0);
          };
          std::fill(buf.begin(), buf.end(), Complex(0.0, 0.0));
          if (inverse_ && onesided_) {
            // Rebuild the full spectrum from its Hermitian half.
            const int64_t half = std::min(in_len, n / 2 + 1);
            for (int64_t k = 0; k < half; ++k) buf[k] = in_at(k);
            for (int64_t k = n / 2 + 1; k < n; ++k) buf[k] = std::conj(buf[n - k]);
          } else {
            for (int64_t k = 0; k < std::min(in_len, n); ++k) buf[k] = in_at(k);
          }
          plan.Transform(buf.data(), inverse_, scratch);
          const double scale = inverse_ ? 1.0 / static_cast<double>(n) : 1.0;
          for (int64_t k = 0; k < out_len; ++k) {
            T* q = yp + ((o * out_len + k) * inner + i) * out_last;
            q[0] = FromDouble<T>(buf[k].real() * scale);
            if (out_last == 2) q[1] = FromDouble<T>(buf[k].imag() * scale);
          }
        }
      });
    });
  }

 private:
  bool axis_from_input_;
  int64_t axis_attr_;
  bool inverse_;
  bool onesided_;
};

class Stft final : public OpKernel {
 public:
  explicit Stft(const KernelInfo& info) : onesided_(info.GetIntOr("onesided", 1) != 0) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    if (x.rank() != 3 || (x.dim(2) != 1 && x.dim(2) != 2))
      ctx.Fail(StrCat("signal must be [batch, length, 1 or 2], got ", x.Describe()));
    const int64_t batch = x.dim(0), length = x.dim(1), cin = x.dim(2);
    const int64_t step = ReadScalarInt(ctx, ctx.required_input(1), "frame_step");
    if (step <= 0) ctx.Fail(StrCat("frame_step must be positive, got ", step));
    const Tensor* window = ctx.input(2);
    const Tensor* frame_len_t = ctx.input(3);
    int64_t frame = length;
    if (window != nullptr) {
      if (window->rank() != 1) ctx.Fail(StrCat("window must be 1-D, got ", window->Describe()));
      frame = window->dim(0);
    }
    if (frame_len_t != nullptr) {
      const int64_t fl = ReadScalarInt(ctx, *frame_len_t, "frame_length");
      if (window != nullptr && fl != frame)
        ctx.Fail(StrCat("frame_length ", fl, " differs from the window length ", frame));
      frame = fl;
    }
    if (frame <= 0 || frame > length)
      ctx.Fail(StrCat("frame length ", frame, " must be in [1, signal length ", length, "]"));
    const int64_t frames = 1 + (length - frame) / step;
    const int64_t bins = onesided_ ? frame / 2 + 1 : frame;
    std::vector<double> win(static_cast<size_t>(frame), 1.0);
    if (window != nullptr) {
      Dispatch(FloatTypes{}, window->dtype(), ctx.node(), [&](auto tag) {
        using W = typename decltype(tag)::type;
        for (int64_t k = 0; k < frame; ++k) win[k] = ToDouble(window->data<W>()[k]);
      });
    }
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), {batch, frames, bins, 2});
    const FftPlan plan(frame);
    Dispatch(FloatTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      const double cost = 10.0 * static_cast<double>(frame) * std::log2(static_cast<double>(frame) + 1.0);
      ThreadPool::For(ctx.thread_pool(), batch * frames, cost, [&](int64_t begin, int64_t end) {
        std::vector<Complex> buf(static_cast<size_t>(frame)), scratch;
        for (int64_t job = begin; job < end; ++job) {
          const int64_t b = job / frames, f = job % frames;
          const T* src = xp + (b * length + f * step) * cin;
          for (int64_t k = 0; k < frame; ++k)
            buf[k] = Complex(ToDouble(src[k * cin]), cin == 2 ? ToDouble(src[k * cin + 1]) : 0.0) * win[k];
          plan.Transform(buf.data(), false, scratch);
          T* dst = yp + job * bins * 2;
          for (int64_t k = 0; k < bins; ++k) {
            dst[2 * k] = FromDouble<T>(buf[k].real());
            dst[2 * k + 1] = FromDouble<T>(buf[k].imag());
          }
        }
      });
    });
  }

 private:
  bool onesided_;
};

ONYX_CPU_KERNEL("DFT", 17, 19, Dft);         // axis is an attribute
ONYX_CPU_KERNEL("DFT", 20, kOpsetMax, Dft);  // axis is input 2
ONYX_CPU_KERNEL("STFT", 17, kOpsetMax, Stft);

}  // namespace
}  // namespace onyx
