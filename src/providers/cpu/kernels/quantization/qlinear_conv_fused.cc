// The fused channels-last QLinearConv forms the optimizer makes: com.onyx.QLinearConvSiLU (a SiLU
// table on the output codes) and com.onyx.QLinearConvAdd (a residual QLinearAdd in the output
// stage), both over QLinearConv's compute (quant_conv.h).
#include <algorithm>
#include <string>
#include <vector>

#include "linalg/q8_lut.h"
#include "providers/cpu/kernels/contrib/qlinear_common.h"
#include "providers/cpu/kernels/quantization/quant_common.h"
#include "providers/cpu/kernels/quantization/quant_conv.h"

namespace onyx {
namespace quant_conv {
namespace {

// com.onyx.QLinearConvSiLU(X, x_scale, x_zp, W, w_scale, w_zp, y_scale, y_zp, B, s_scale, s_zp,
// z_scale, z_zp), channels_last = 1 only: com.microsoft.QLinearConv into (y_scale, y_zp), then
// com.onyx.QLinearSiLU of that with the Sigmoid's (s_scale, s_zp) into (z_scale, z_zp) - what the
// optimizer's QLinearConvSiluFusion makes of a channels-last conv and its SiLU. The SiLU is a
// 256-entry table (linalg::Q8SiluTable) each requantized code is looked up in before it is stored.
class QLinearConvSiLU final : public QLinearConv {
 public:
  explicit QLinearConvSiLU(const KernelInfo& info) : QLinearConv(info, info.GetIntOr("channels_last", 0) != 0) {
    if (info.GetIntOr("channels_last", 0) == 0) info.Fail("supports channels_last = 1 only");
    if (info.num_inputs() != 13)
      info.Fail("inputs must be QLinearConv's 9 (B may be empty), then s_scale, s_zero_point, z_scale, z_zero_point");
    std::vector<const Tensor*> params;
    for (size_t i : {6, 7, 9, 10, 11, 12}) params.push_back(info.ConstantInput(i));
    if (std::all_of(params.begin(), params.end(), [](const Tensor* t) { return t != nullptr; }) &&
        MakeTable(params, table_, nullptr))
      constant_ = true;
  }

 protected:
  const uint8_t* Lut(KernelContext& ctx, uint8_t* local) const override {
    if (constant_) return table_;
    std::vector<const Tensor*> params;
    for (size_t i : {6, 7, 9, 10, 11, 12}) params.push_back(ctx.input(i));
    std::string error;
    if (!MakeTable(params, local, &error)) ctx.Fail(error);
    return local;
  }

 private:
  // params: y_scale, y_zp, s_scale, s_zp, z_scale, z_zp (null: absent).
  static bool MakeTable(const std::vector<const Tensor*>& params, uint8_t* table, std::string* error) {
    static const char* kNames[] = {"y_scale", "y_zero_point", "s_scale", "s_zero_point", "z_scale", "z_zero_point"};
    const Tensor* yz = params[1];
    for (size_t k = 0; k < 6; ++k) {
      const Tensor* t = params[k];
      const bool scale = k % 2 == 0;
      const bool ok = t != nullptr && t->size() == 1 &&
                      (scale ? t->dtype() == DataType::kFloat : yz != nullptr && t->dtype() == yz->dtype() && IsInt8Type(t->dtype()));
      if (!ok) {
        if (error) *error = StrCat("input '", kNames[k], "' must be a ", scale ? "float scalar" : "scalar of y_zero_point's type (uint8 or int8)");
        return false;
      }
    }
    const bool is_signed = yz->dtype() == DataType::kInt8;
    auto zp = [&](size_t k) { return is_signed ? int32_t{params[k]->data<int8_t>()[0]} : int32_t{params[k]->data<uint8_t>()[0]}; };
    linalg::Q8SiluTable(is_signed, params[0]->data<float>()[0], zp(1), params[2]->data<float>()[0], zp(3),
                        params[4]->data<float>()[0], zp(5), table);
    return true;
  }

  uint8_t table_[256] = {};
  bool constant_ = false;
};

// com.onyx.QLinearConvAdd(X, x_scale, x_zp, W, w_scale, w_zp, y_scale, y_zp, B, R, r_scale,
// r_zp, c_scale, c_zp), attribute conv_input (0 or 1), channels_last = 1 only:
// com.microsoft.QLinearConv into (y_scale, y_zp), then com.microsoft.QLinearAdd of that and R (R
// its input B when conv_input = 0, its input A when 1) into (c_scale, c_zp) - what the optimizer's
// QLinearConvAddFusion makes of a channels-last conv and the residual add reading it. R has Y's
// shape and type; the zero points r_zp and c_zp may be absent (0).
class QLinearConvAdd final : public QLinearConv {
 public:
  explicit QLinearConvAdd(const KernelInfo& info)
      : QLinearConv(info, info.GetIntOr("channels_last", 0) != 0), conv_input_(info.GetIntOr("conv_input", 0)) {
    if (info.GetIntOr("channels_last", 0) == 0) info.Fail("supports channels_last = 1 only");
    if (conv_input_ != 0 && conv_input_ != 1) info.Fail("conv_input must be 0 or 1");
    if (info.num_inputs() < 13 || info.num_inputs() > 14)
      info.Fail("inputs must be QLinearConv's 9 (B may be empty), then R, r_scale, r_zero_point, c_scale[, c_zero_point]");
  }

 protected:
  bool Addend(KernelContext& ctx, const Tensor& y, float ys, int32_t yz, linalg::Q8ConvAddend& add) const override {
    const Tensor& r = ctx.required_input(9);
    if (r.dtype() != y.dtype() || r.shape() != y.shape())
      ctx.Fail(StrCat("R must have Y's type and shape ", y.Describe(), ", not ", r.Describe()));
    const float rs = contrib::ScalarFloat(ctx, 10, "r_scale"), cs = contrib::ScalarFloat(ctx, 12, "c_scale");
    const int32_t rz = contrib::ZeroPoint(ctx, 11, y.dtype(), "r_zero_point"),
                  cz = contrib::ZeroPoint(ctx, 13, y.dtype(), "c_zero_point");
    // QLinearAdd's ratios and fixed part, as its kernel computes them from its A and B.
    const bool conv_is_a = conv_input_ == 0;
    const float sa = conv_is_a ? ys : rs, sb = conv_is_a ? rs : ys;
    const int32_t za = conv_is_a ? yz : rz, zb = conv_is_a ? rz : yz;
    const float rac = sa / cs, rbc = sb / cs;
    add.fixed = QLinearAddFixedPart(rac, za, rbc, zb, cz);
    add.ra = rac, add.rb = rbc, add.conv_is_a = conv_is_a;
    add.other = r.raw_data();
    add.ldo = y.dim(3);
    return true;
  }

 private:
  int64_t conv_input_;
};

}  // namespace

ONYX_REGISTER_KERNEL("CPU", "com.onyx", "QLinearConvSiLU", 1, kOpsetMax, QLinearConvSiLU);
ONYX_REGISTER_KERNEL("CPU", "com.onyx", "QLinearConvAdd", 1, kOpsetMax, QLinearConvAdd);

}  // namespace quant_conv
}  // namespace onyx
