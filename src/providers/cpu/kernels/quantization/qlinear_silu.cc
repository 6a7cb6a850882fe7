// com.onyx.QLinearSiLU(X, X_scale, X_zero_point, S_scale, S_zero_point, Y_scale, Y_zero_point):
// com.microsoft QLinearSigmoid of X into (S_scale, S_zero_point) then QLinearMul of X by it into
// (Y_scale, Y_zero_point), YOLO's int8 SiLU, which the optimizer's QLinearSiluFusion makes. Y is
// a function of X's code alone: one 256-entry table (linalg::Q8SiluTable, the two ops' arithmetic
// code by code), so the op is one lookup pass where the two read and wrote the image three times.
// Scales are float scalars, zero points scalars of X's type (absent: 0).
#include <cstring>
#include <string>

#include "linalg/q8_lut.h"
#include "platform/thread_pool.h"
#include "providers/cpu/kernels/contrib/qlinear_common.h"
#include "providers/kernel.h"

namespace onyx::quant {
namespace {

using contrib::IsQuant8;

class QLinearSiLU final : public OpKernel {
 public:
  explicit QLinearSiLU(const KernelInfo& info) {
    if (info.num_inputs() < 6 || info.num_inputs() > 7)
      info.Fail("inputs must be X, X_scale, X_zero_point, S_scale, S_zero_point, Y_scale[, Y_zero_point]");
    // Constant parameters (the fused graph's): the table once, here.
    bool constant = true;
    for (size_t i = 1; i < info.num_inputs(); ++i) constant = constant && info.ConstantInput(i) != nullptr;
    if (constant && info.ConstantInput(2) != nullptr && IsQuant8(info.ConstantInput(2)->dtype())) {
      const DataType dt = info.ConstantInput(2)->dtype();
      Params p;
      const size_t n = info.num_inputs();
      if (Read(dt, [&](size_t i) { return i < n ? info.ConstantInput(i) : nullptr; }, p, nullptr)) {
        linalg::Q8SiluTable(dt == DataType::kInt8, p.sx, p.zx, p.ss, p.zs, p.sy, p.zy, table_);
        table_type_ = dt;
      }
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const DataType dt = x.dtype();
    if (!IsQuant8(dt)) ctx.Fail(StrCat("X's element type ", DataTypeName(dt), " is not supported (uint8 or int8)"));
    const uint8_t* table = table_;
    uint8_t local[256];
    if (table_type_ != dt) {
      Params p;
      std::string error;
      const size_t n = ctx.num_inputs();
      if (!Read(dt, [&](size_t i) { return i < n ? ctx.input(i) : nullptr; }, p, &error)) ctx.Fail(error);
      linalg::Q8SiluTable(dt == DataType::kInt8, p.sx, p.zx, p.ss, p.zs, p.sy, p.zy, local);
      table = local;
    }
    Tensor& y = ctx.AllocateOutput(0, dt, x.shape());
    const auto* xd = static_cast<const uint8_t*>(x.raw_data());
    auto* yd = static_cast<uint8_t*>(y.raw_data());
    ThreadPool::For(ctx.thread_pool(), x.size(), 1.0, [&](int64_t begin, int64_t end) {
      linalg::Q8Lookup(table, xd + begin, end - begin, yd + begin);
    });
  }

 private:
  struct Params {
    float sx = 0, ss = 0, sy = 0;
    int32_t zx = 0, zs = 0, zy = 0;
  };

  // The scalars from input i = get(i) (null: absent); false with a message naming the input.
  template <typename Get>
  static bool Read(DataType dt, Get get, Params& p, std::string* error) {
    static const char* kNames[] = {"X", "X_scale", "X_zero_point", "S_scale", "S_zero_point", "Y_scale", "Y_zero_point"};
    float* scales[] = {&p.sx, &p.ss, &p.sy};
    int32_t* zeros[] = {&p.zx, &p.zs, &p.zy};
    for (size_t k = 0; k < 3; ++k) {
      const Tensor* s = get(1 + 2 * k);
      if (s == nullptr || s->dtype() != DataType::kFloat || s->size() != 1) {
        if (error) *error = StrCat("input '", kNames[1 + 2 * k], "' must be a float scalar");
        return false;
      }
      *scales[k] = s->data<float>()[0];
      const Tensor* z = get(2 + 2 * k);
      if (z == nullptr) continue;
      if (z->dtype() != dt || z->size() != 1) {
        if (error) *error = StrCat("input '", kNames[2 + 2 * k], "' must be a scalar of type ", DataTypeName(dt));
        return false;
      }
      *zeros[k] = dt == DataType::kUInt8 ? z->data<uint8_t>()[0] : z->data<int8_t>()[0];
    }
    return true;
  }

  uint8_t table_[256] = {};
  DataType table_type_ = DataType::kUndefined;  // the type table_ is for, if made at creation
};

}  // namespace

ONYX_REGISTER_KERNEL("CPU", "com.onyx", "QLinearSiLU", 1, kOpsetMax, QLinearSiLU);

}  // namespace onyx::quant
