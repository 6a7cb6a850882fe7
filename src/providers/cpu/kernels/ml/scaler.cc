// Scaler (ai.onnx.ml 1): Y = (X - offset) * scale as float; offset/scale hold one value or one
// per column (the last axis of a 1-D or 2-D X, axis 1 otherwise, as ONNX Runtime indexes them).
#include "providers/cpu/kernels/ml/ml_common.h"

namespace onyx::ml {
namespace {

class Scaler final : public OpKernel {
 public:
  explicit Scaler(const KernelInfo& info)
      : offset_(info.GetFloatsOr("offset", {})), scale_(info.GetFloatsOr("scale", {})) {
    if (offset_.empty()) offset_.push_back(0.0f);
    if (scale_.empty()) scale_.push_back(1.0f);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    if (x.rank() == 0) ctx.Fail("input X must have at least one dimension");
    const int64_t stride = x.rank() == 1 ? x.dim(0) : x.dim(1);
    auto check = [&](const std::vector<float>& v, const char* name) {
      if (v.size() != 1 && static_cast<int64_t>(v.size()) != stride)
        ctx.Fail(StrCat("attribute '", name, "' has ", v.size(), " values; expected 1 or ", stride));
    };
    check(offset_, "offset");
    check(scale_, "scale");
    const std::vector<float> xf = InputAsFloat(ctx, x);
    Tensor& y = ctx.AllocateOutput(0, DataType::kFloat, x.shape());
    float* py = y.data<float>();
    const bool per_col_offset = offset_.size() > 1, per_col_scale = scale_.size() > 1;
    for (int64_t i = 0; i < x.size(); ++i) {
      const int64_t c = stride == 0 ? 0 : i % stride;
      py[i] = (xf[i] - offset_[per_col_offset ? c : 0]) * scale_[per_col_scale ? c : 0];
    }
  }

 private:
  std::vector<float> offset_, scale_;
};

ONYX_REGISTER_KERNEL("CPU", "ai.onnx.ml", "Scaler", 1, kOpsetMax, Scaler);

}  // namespace
}  // namespace onyx::ml
