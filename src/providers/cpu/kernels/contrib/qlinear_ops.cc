// com.microsoft QLinear* pointwise ops on uint8/int8 with per-tensor scales and zero points,
// computed with ONNX Runtime's float formulas and round-to-nearest-even so results match it
// bit for bit:
//   QLinearAdd    c = (a - za) sa/sc + (b - zb) sb/sc + zc   (as fixed + a*rAC + b*rBC, fused)
//   QLinearMul    c = (a - za)(b - zb) * (sa sb / sc) + zc
//   QLinearSigmoid, QLinearLeakyRelu(alpha): a 256-entry table y = q(f(dq(x)))
//   QLinearConcat(Y_scale, Y_zp, (X, X_scale, X_zp)...): each input requantized to Y's params
//   QLinearSoftmax(axis, opset): ONNX Runtime's lookup-table algorithm (exp table shifted by the
//   row maximum, float sums, y = round(e * floor(1 / y_scale) / sum) + y_zp).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "base/int_math.h"
#include "linalg/q8_lut.h"
#include "linalg/q8_quantize.h"
#include "linalg/q8_softmax.h"
#include "linalg/vector_math.h"
#include "ops/broadcast.h"
#include "platform/thread_pool.h"
#include "providers/cpu/kernels/contrib/qlinear_common.h"
#include "providers/cpu/kernels/math/elementwise.h"
#include "providers/cpu/kernels/quantization/quant_common.h"
#include "providers/kernel.h"

namespace onyx::contrib {
namespace {

// QLinearAdd's row through linalg's vectorized loop: fma(x, rx, fma(y, ry, fixed)), rounded half
// to even and saturated, element for element.
inline void AddRow(const uint8_t* x, float rx, const uint8_t* y, int64_t y_step, float ry, float fixed, int64_t n,
                   uint8_t* out) {
  linalg::Q8AddU8(x, rx, y, y_step, ry, fixed, n, out);
}
inline void AddRow(const int8_t* x, float rx, const int8_t* y, int64_t y_step, float ry, float fixed, int64_t n,
                   int8_t* out) {
  linalg::Q8AddS8(x, rx, y, y_step, ry, fixed, n, out);
}

inline void MulRow(const uint8_t* x, int32_t zx, const uint8_t* y, int64_t y_step, int32_t zy, float ratio, int32_t zc,
                   int64_t n, uint8_t* out) {
  linalg::Q8MulU8(x, zx, y, y_step, zy, ratio, zc, n, out);
}
inline void MulRow(const int8_t* x, int32_t zx, const int8_t* y, int64_t y_step, int32_t zy, float ratio, int32_t zc,
                   int64_t n, int8_t* out) {
  linalg::Q8MulS8(x, zx, y, y_step, zy, ratio, zc, n, out);
}

// The size from which same-shape QLinearAdd / QLinearMul split over the threads.
constexpr int64_t kParallelElements = 40960;

class QLinearBinary final : public OpKernel {
 public:
  QLinearBinary(const KernelInfo&, bool mul) : mul_(mul) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(3);
    if (b.dtype() != a.dtype()) ctx.Fail("A and B must have the same element type");
    const float sa = ScalarFloat(ctx, 1, "A_scale"), sb = ScalarFloat(ctx, 4, "B_scale"), sc = ScalarFloat(ctx, 6, "C_scale");
    const int32_t za = ZeroPoint(ctx, 2, a.dtype(), "A_zero_point"), zb = ZeroPoint(ctx, 5, a.dtype(), "B_zero_point"),
                  zc = ZeroPoint(ctx, 7, a.dtype(), "C_zero_point");
    const Shape out_shape = BroadcastShapes({a.shape(), b.shape()});
    Tensor& c = ctx.AllocateOutput(0, a.dtype(), out_shape);
    if (c.size() == 0) return;
    DispatchQuant8(ctx, a.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* ad = a.data<T>();
      const T* bd = b.data<T>();
      T* cd = c.data<T>();
      const float rac = sa / sc, rbc = sb / sc;
      const float fixed = QLinearAddFixedPart(rac, za, rbc, zb, zc);
      const float fixed_b_first = QLinearAddFixedPart(rbc, zb, rac, za, zc);  // runs where only A is constant
      // The outer operand's ratio (x in fma(x, rx, t)) as 0 when its whole term stays below
      // 255 * 2^-49 < 2^-41: the result is then t's (t exactly when |t| >= 2^-16, where half an
      // ulp is 2^-40; both round to 0 below), so no output changes. BERT's attention-mask add
      // has rx = 0.012 / 1.3e36, a subnormal: every product with it took a microcode assist, 630
      // instead of 47 us for the [1, 12, 128, 128] add. Only the outer term: the inner one moves
      // t, whose rounding the outer fma then sees.
      auto outer = [](float r) { return std::fabs(r) < 0x1p-49f ? 0.0f : r; };
      const float rac_outer = outer(rac), rbc_outer = outer(rbc);
      const float ratio = sa * sb / sc;
      ThreadPool* pool = ctx.thread_pool();
      const int64_t size = c.size(), threads = pool != nullptr ? pool->num_threads() : 1;
      if (a.shape() == b.shape() && threads > 1 && size >= kParallelElements) {
        // Same shapes (a residual add): one equal block per thread (MobileNetV2's largest, 75K
        // elements, took 11 us on one). The cost, 2 cycles an element, lets the pool split
        // from kParallelElements on; smaller tensors stay on one thread.
        const int64_t block = CeilDiv(CeilDiv(size, threads), int64_t{64}) * 64;
        ThreadPool::For(pool, CeilDiv(size, block), 2.0 * static_cast<double>(block), [&](int64_t b0, int64_t b1) {
          const int64_t begin = b0 * block, count = std::min(size, b1 * block) - begin;
          if (mul_) MulRow(ad + begin, za, bd + begin, 1, zb, ratio, zc, count, cd + begin);
          else AddRow(ad + begin, rac_outer, bd + begin, 1, rbc, fixed, count, cd + begin);
        });
        return;
      }
      // Broadcast shapes (BERT's bias adds): runs along which each input advances or stays put,
      // split over the threads (2 cycles an element, as above). Which row function a run takes
      // depends on the run, not on the piece of it a thread gets, so the results do not depend
      // on the split. Dimensions of 1 are merged away, so every run is longer than one element
      // unless the output is a single element.
      const elementwise::BroadcastPlan plan(out_shape, {a.shape(), b.shape()});
      // A single-element output counts as A constant: ONNX Runtime takes a one-element A as its
      // scalar-A case before anything else, which builds the constant term with B first.
      const bool long_runs = size > 1;
      plan.Run(pool, 2.0, [&](int64_t out, const int64_t* in, const bool* advances, int64_t count) {
        const T* ap = ad + in[0];
        const T* bp = bd + in[1];
        T* cp = cd + out;
        const bool a_const = long_runs ? !advances[0] : true, b_const = !advances[1];
        if (mul_) {
          // zc joins before rounding, as ONNX Runtime; the product commutes, so the advancing
          // input goes first (both constant: one value for the run).
          if (a_const) {
            MulRow(bp, zb, ap, 0, za, ratio, zc, b_const ? 1 : count, cp);
            if (b_const) std::fill(cp + 1, cp + count, cp[0]);
          } else {
            MulRow(ap, za, bp, b_const ? 0 : 1, zb, ratio, zc, count, cp);
          }
        } else if (a_const) {
          // A constant along the run joins the fixed part first (ONNX Runtime's scalar-A kernel).
          if (b_const) {  // both constant: one value for the run
            AddRow(bp, rbc_outer, ap, 0, rac, fixed_b_first, 1, cp);
            std::fill(cp + 1, cp + count, cp[0]);
          } else {
            AddRow(bp, rbc_outer, ap, 0, rac, fixed_b_first, count, cp);
          }
        } else {
          AddRow(ap, rac_outer, bp, b_const ? 0 : 1, rbc, fixed, count, cp);  // a advances (or one element)
        }
      });
    });
  }

 private:
  bool mul_;
};

enum class LutKind { kSigmoid, kLeakyRelu };

class QLinearLut final : public OpKernel {
 public:
  QLinearLut(const KernelInfo& info, LutKind kind) : kind_(kind), alpha_(info.GetFloatOr("alpha", 0.01f)) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const float sx = ScalarFloat(ctx, 1, "X_scale"), sy = ScalarFloat(ctx, 3, "Y_scale");
    const int32_t zx = ZeroPoint(ctx, 2, x.dtype(), "X_zero_point"), zy = ZeroPoint(ctx, 4, x.dtype(), "Y_zero_point");
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.shape());
    DispatchQuant8(ctx, x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      T table[256];
      float f[256];
      for (int i = 0; i < 256; ++i) {
        const float v = sx * static_cast<float>(static_cast<int32_t>(static_cast<T>(i)) - zx);
        f[i] = kind_ == LutKind::kSigmoid || v >= 0.0f ? v : v * alpha_;
      }
      // ONNX Runtime builds its sigmoid table with MLAS's logistic: so does this one.
      if (kind_ == LutKind::kSigmoid) linalg::VecSigmoidAsOnnxRuntime(f, f, 256);
      for (int i = 0; i < 256; ++i) table[i] = QuantizeValue<T>(f[i], sy, zy);
      const uint8_t* xd = static_cast<const uint8_t*>(x.raw_data());
      T* yd = y.data<T>();
      // The table's codes as bytes (an int8 code's index is its stored byte, as here).
      const auto* bytes = reinterpret_cast<const uint8_t*>(table);
      auto* yb = reinterpret_cast<uint8_t*>(yd);
      ThreadPool::For(ctx.thread_pool(), x.size(), 1.0, [&](int64_t begin, int64_t end) {
        linalg::Q8Lookup(bytes, xd + begin, end - begin, yb + begin);
      });
    });
  }

 private:
  LutKind kind_;
  float alpha_;
};

class QLinearConcat final : public OpKernel {
 public:
  explicit QLinearConcat(const KernelInfo& info) : axis_(info.GetInt("axis")) {
    if (info.num_inputs() < 5 || (info.num_inputs() - 2) % 3 != 0)
      info.Fail("inputs must be Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) triples");
  }

  void Compute(KernelContext& ctx) const override {
    const float sy = ScalarFloat(ctx, 0, "Y_scale");
    const Tensor& zy_t = ctx.required_input(1);
    const DataType dt = zy_t.dtype();
    if (!IsQuant8(dt) || zy_t.size() != 1) ctx.Fail("Y_zero_point must be a uint8 or int8 scalar");
    const int32_t zy = ZeroPoint(ctx, 1, dt, "Y_zero_point");
    const size_t n_in = (ctx.num_inputs() - 2) / 3;
    const Tensor& first = ctx.required_input(2);
    if (first.rank() == 0) ctx.Fail("inputs must have rank >= 1");
    const int64_t rank = static_cast<int64_t>(first.rank());
    const int64_t axis = NormalizeAxis(axis_, rank);
    Shape out_shape = first.shape();
    out_shape[axis] = 0;
    for (size_t i = 0; i < n_in; ++i) {
      const Tensor& t = ctx.required_input(2 + 3 * i);
      if (t.dtype() != dt) ctx.Fail("every input must have Y_zero_point's element type");
      if (static_cast<int64_t>(t.rank()) != rank) ctx.Fail("inputs must have the same rank");
      for (int64_t d = 0; d < rank; ++d)
        if (d != axis && t.dim(d) != first.dim(d)) ctx.Fail("input shapes differ outside the concatenation axis");
      out_shape[axis] += t.dim(axis);
    }
    Tensor& y = ctx.AllocateOutput(0, dt, out_shape);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= out_shape[d];
    for (int64_t d = axis + 1; d < rank; ++d) inner *= out_shape[d];
    const int64_t out_row = out_shape[axis] * inner;
    DispatchQuant8(ctx, dt, [&](auto tag) {
      using T = decltype(tag);
      int64_t offset = 0;
      for (size_t i = 0; i < n_in; ++i) {
        const Tensor& t = ctx.required_input(2 + 3 * i);
        const float sx = ScalarFloat(ctx, 3 + 3 * i, "X_scale");
        const int32_t zx = ZeroPoint(ctx, 4 + 3 * i, dt, "X_zero_point");
        const bool same = sx == sy && zx == zy;
        T table[256];
        if (!same) RequantizeTable<T>(sx, zx, sy, zy, table);
        const int64_t row = t.dim(axis) * inner;
        const uint8_t* src = static_cast<const uint8_t*>(t.raw_data());
        // Rows through the vector lookup and over the threads: a channels-last concat (YOLO's in
        // QdqNhwcLayout's region) has one short row per pixel.
        const auto* codes = reinterpret_cast<const uint8_t*>(table);
        auto* out = static_cast<uint8_t*>(y.raw_data());
        ThreadPool::For(ctx.thread_pool(), outer, static_cast<double>(row), [&](int64_t o0, int64_t o1) {
          for (int64_t o = o0; o < o1; ++o) {
            uint8_t* dst = out + o * out_row + offset;
            const uint8_t* s = src + o * row;
            if (same) std::memcpy(dst, s, static_cast<size_t>(row));
            else linalg::Q8Lookup(codes, s, row, dst);
          }
        });
        offset += row;
      }
    });
  }

 private:
  int64_t axis_;
};

class QLinearSoftmax final : public OpKernel {
 public:
  explicit QLinearSoftmax(const KernelInfo& info) : opset_(info.GetInt("opset")) {
    axis_ = info.GetIntOr("axis", opset_ < 13 ? 1 : -1);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const float sx = ScalarFloat(ctx, 1, "X_scale"), sy = ScalarFloat(ctx, 3, "y_scale");
    const int32_t zy = ZeroPoint(ctx, 4, x.dtype(), "y_zero_point");
    if (x.rank() == 0) ctx.Fail("X must have rank >= 1");
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.shape());
    if (x.size() == 0) return;
    const int64_t axis = NormalizeAxis(axis_, static_cast<int64_t>(x.rank()));
    // Rows of D elements with stride `stride` between elements (opset 13: the axis only).
    int64_t D = 1, stride = 1;
    if (opset_ < 13) {
      for (size_t d = static_cast<size_t>(axis); d < x.rank(); ++d) D *= x.dim(d);
    } else {
      D = x.dim(static_cast<size_t>(axis));
      for (size_t d = static_cast<size_t>(axis) + 1; d < x.rank(); ++d) stride *= x.dim(d);
    }
    const bool is_signed = x.dtype() == DataType::kInt8;
    if (!IsQuant8(x.dtype())) ctx.Fail("X must be uint8 or int8");
    // exp table, entry i for a code 255 - i below its row's maximum, shifted so that the largest
    // sum of D terms stays finite.
    float table[256];
    double shift = std::log(static_cast<double>(std::numeric_limits<float>::max()) / static_cast<double>(D));
    shift = std::max(0.0, shift - 5.0) / static_cast<double>(sx);
    for (int i = 0; i < 256; ++i)
      table[i] = static_cast<float>(std::exp((static_cast<double>(i) - 255 + shift) * static_cast<double>(sx)));
    const float y_mult = std::floor(1.0f / sy);
    // linalg::Q8SoftmaxRows rounds by adding 1.5 * 2^23, exact while the quotients stay below 2^22.
    const bool rows_kernel = stride == 1 && y_mult < 4194304.0f && std::isfinite(table[255] * y_mult);
    const int64_t rows = x.size() / D;
    const uint8_t* xd = static_cast<const uint8_t*>(x.raw_data());
    uint8_t* yd = static_cast<uint8_t*>(y.raw_data());
    // Codes as unsigned bytes in their type's order (int8: the top bit flipped).
    const uint8_t flip = is_signed ? 0x80 : 0;
    ThreadPool::For(ctx.thread_pool(), rows, 4.0 * D, [&](int64_t begin, int64_t end) {
      std::vector<uint8_t> idx(static_cast<size_t>(D));
      std::vector<float> scratch;
      if (rows_kernel) scratch.resize(static_cast<size_t>(std::min(end - begin, linalg::kQ8SoftmaxRows) * D));
      // Any row, any stride: table indices shifted so the row maximum lands on the top entry.
      auto general_row = [&](int64_t r) {
        const int64_t base = (r / stride) * D * stride + r % stride;
        uint8_t mx = 0;
        for (int64_t i = 0; i < D; ++i) mx = std::max<uint8_t>(mx, xd[base + i * stride] ^ flip);
        for (int64_t i = 0; i < D; ++i) idx[i] = static_cast<uint8_t>(255 - mx + (xd[base + i * stride] ^ flip));
        float sum = 0.0f;
        for (int64_t i = 0; i < D; ++i) sum += table[idx[i]];
        for (int64_t i = 0; i < D; ++i) {
          const int32_t q = static_cast<int32_t>(std::nearbyint((table[idx[i]] * y_mult) / sum)) + zy;
          uint8_t& out = yd[base + i * stride];
          if (is_signed) out = static_cast<uint8_t>(static_cast<int8_t>(std::clamp(q, -128, 127)));
          else out = static_cast<uint8_t>(std::clamp(q, 0, 255));
        }
      };
      for (int64_t r = begin; r < end;) {
        if (!rows_kernel) {
          general_row(r++);
          continue;
        }
        const int64_t n = std::min(end - r, linalg::kQ8SoftmaxRows);
        // False for a row whose sum is not positive: the general loop then takes the n rows.
        if (!linalg::Q8SoftmaxRows(xd + r * D, n, D, is_signed, table, y_mult, zy, scratch.data(), yd + r * D))
          for (int64_t k = r; k < r + n; ++k) general_row(k);
        r += n;
      }
    });
  }

 private:
  int64_t opset_;
  int64_t axis_;
};

ONYX_REGISTER_KERNEL_FN("CPU", "com.microsoft", "QLinearAdd", 1, kOpsetMax,
                        [](const KernelInfo& info) -> std::unique_ptr<OpKernel> {
                          return std::make_unique<QLinearBinary>(info, false);
                        });
ONYX_REGISTER_KERNEL_FN("CPU", "com.microsoft", "QLinearMul", 1, kOpsetMax,
                        [](const KernelInfo& info) -> std::unique_ptr<OpKernel> {
                          return std::make_unique<QLinearBinary>(info, true);
                        });
ONYX_REGISTER_KERNEL_FN("CPU", "com.microsoft", "QLinearSigmoid", 1, kOpsetMax,
                        [](const KernelInfo& info) -> std::unique_ptr<OpKernel> {
                          return std::make_unique<QLinearLut>(info, LutKind::kSigmoid);
                        });
ONYX_REGISTER_KERNEL_FN("CPU", "com.microsoft", "QLinearLeakyRelu", 1, kOpsetMax,
                        [](const KernelInfo& info) -> std::unique_ptr<OpKernel> {
                          return std::make_unique<QLinearLut>(info, LutKind::kLeakyRelu);
                        });
ONYX_REGISTER_KERNEL("CPU", "com.microsoft", "QLinearConcat", 1, kOpsetMax, QLinearConcat);
ONYX_REGISTER_KERNEL("CPU", "com.microsoft", "QLinearSoftmax", 1, kOpsetMax, QLinearSoftmax);

}  // namespace
}  // namespace onyx::contrib
