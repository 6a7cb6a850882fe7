// Normalizer (ai.onnx.ml 1): scales each row of a [N, C] (or [C]) input by its MAX, L1 or L2
// norm, as float; an all-zero row is copied unchanged (as ONNX Runtime does).
#include "providers/cpu/kernels/ml/ml_common.h"

namespace onyx::ml {
namespace {

enum class Norm { kMax, kL1, kL2 };

class Normalizer final : public OpKernel {
 public:
  explicit Normalizer(const KernelInfo& info) {
    const std::string norm = info.GetStringOr("norm", "MAX");
    if (norm == "MAX") norm_ = Norm::kMax;
    else if (norm == "L1") norm_ = Norm::kL1;
    else if (norm == "L2") norm_ = Norm::kL2;
    else info.Fail(StrCat("norm '", norm, "' is not one of MAX, L1, L2"));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    if (x.rank() == 0 || x.rank() > 2) ctx.Fail("input X must be 1-D [C] or 2-D [N, C]");
    const std::vector<float> in = InputAsFloat(ctx, x);
    Tensor& y = ctx.AllocateOutput(0, DataType::kFloat, x.shape());
    float* out = y.data<float>();
    const int64_t stride = x.rank() == 1 ? x.dim(0) : x.dim(1);
    int64_t inner = 1;
    for (size_t d = 2; d < x.rank(); ++d) inner *= x.dim(d);
    if (x.size() == 0 || stride == 0) return;
    const int64_t loops = x.size() / stride;
    for (int64_t n = 0; n < loops; ++n) {
      const int64_t base = (n % inner) + (n / inner) * stride * inner;
      auto at = [&](int64_t s) { return base + s * inner; };
      float norm = 0.0f;
      if (norm_ == Norm::kMax) {
        norm = std::numeric_limits<float>::lowest();
        for (int64_t s = 0; s < stride; ++s) norm = std::max(norm, in[at(s)]);
      } else if (norm_ == Norm::kL1) {
        for (int64_t s = 0; s < stride; ++s) norm += std::abs(in[at(s)]);
      } else {
        for (int64_t s = 0; s < stride; ++s) norm += in[at(s)] * in[at(s)];
      }
      for (int64_t s = 0; s < stride; ++s) {
        const float v = in[at(s)];
        if (norm == 0.0f) out[at(s)] = v;
        else if (norm_ == Norm::kL2) out[at(s)] = v < 0 ? -std::sqrt(v * v / norm) : std::sqrt(v * v / norm);
        else out[at(s)] = v / norm;
      }
    }
  }

 private:
  Norm norm_ = Norm::kMax;
};

ONYX_REGISTER_KERNEL("CPU", "ai.onnx.ml", "Normalizer", 1, kOpsetMax, Normalizer);

}  // namespace
}  // namespace onyx::ml
