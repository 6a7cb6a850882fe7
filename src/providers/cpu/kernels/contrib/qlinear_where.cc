// com.microsoft QLinearWhere(condition, X, x_scale, x_zero_point, Y, y_scale, y_zero_point,
// z_scale, z_zero_point): Where on uint8/int8 codes, numpy broadcasting of all three inputs. X's
// and Y's codes are requantized to Z's parameters through 256-entry tables, dequantized then
// quantized in float as ONNX Runtime builds them, so each code is the one
// DequantizeLinear -> Where -> QuantizeLinear gives; an input already in Z's parameters is copied.
#include "providers/cpu/kernels/contrib/qlinear_common.h"
#include "providers/cpu/kernels/math/elementwise.h"
#include "providers/kernel.h"

namespace onyx::contrib {
namespace {

class QLinearWhere final : public OpKernel {
 public:
  explicit QLinearWhere(const KernelInfo&) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& cond = ctx.required_input(0);
    const Tensor& x = ctx.required_input(1);
    const Tensor& y = ctx.required_input(4);
    if (cond.dtype() != DataType::kBool) ctx.Fail(StrCat("condition must be bool, not ", DataTypeName(cond.dtype())));
    if (y.dtype() != x.dtype())
      ctx.Fail(StrCat("X (", DataTypeName(x.dtype()), ") and Y (", DataTypeName(y.dtype()), ") must have one type"));
    const DataType dt = x.dtype();
    const float sx = ScalarFloat(ctx, 2, "x_scale"), sy = ScalarFloat(ctx, 5, "y_scale"),
                sz = ScalarFloat(ctx, 7, "z_scale");
    Shape out_shape;
    try {
      out_shape = BroadcastShapes({cond.shape(), x.shape(), y.shape()});
    } catch (const Error& e) {
      ctx.Fail(e.what());
    }
    DispatchQuant8(ctx, dt, [&](auto tag) {
      using T = decltype(tag);
      const int32_t zx = ZeroPoint(ctx, 3, dt, "x_zero_point"), zy = ZeroPoint(ctx, 6, dt, "y_zero_point"),
                    zz = ZeroPoint(ctx, 8, dt, "z_zero_point");
      Tensor& z = ctx.AllocateOutput(0, dt, out_shape);
      if (z.size() == 0) return;
      T x_table[256], y_table[256];
      const bool x_same = sx == sz && zx == zz, y_same = sy == sz && zy == zz;
      if (!x_same) RequantizeTable<T>(sx, zx, sz, zz, x_table);
      if (!y_same) RequantizeTable<T>(sy, zy, sz, zz, y_table);
      // A code's table index is its stored byte.
      auto from_x = [&](T v) { return x_same ? v : x_table[static_cast<uint8_t>(v)]; };
      auto from_y = [&](T v) { return y_same ? v : y_table[static_cast<uint8_t>(v)]; };
      elementwise::TernaryLoop(ctx.thread_pool(), out_shape, cond.data<bool>(), cond.shape(), x.data<T>(), x.shape(),
                               y.data<T>(), y.shape(), z.data<T>(), elementwise::kCheapCost,
                               [&](bool c, T a, T b) { return c ? from_x(a) : from_y(b); });
    });
  }
};

ONYX_REGISTER_KERNEL("CPU", "com.microsoft", "QLinearWhere", 1, kOpsetMax, QLinearWhere);

}  // namespace
}  // namespace onyx::contrib
