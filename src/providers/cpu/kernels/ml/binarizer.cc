// Binarizer (ai.onnx.ml 1): 1 where X > threshold, else 0, in X's element type.
#include "providers/cpu/kernels/ml/ml_common.h"

namespace onyx::ml {
namespace {

class Binarizer final : public OpKernel {
 public:
  explicit Binarizer(const KernelInfo& info) : threshold_(info.GetFloatOr("threshold", 0.0f)) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.shape());
    if (!TryDispatch(MlNumericTypes{}, x.dtype(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          const T* px = x.data<T>();
          T* py = y.data<T>();
          // Compared in double so integer inputs are not rounded through float.
          const double t = threshold_;
          for (int64_t i = 0; i < x.size(); ++i) py[i] = static_cast<double>(px[i]) > t ? T(1) : T(0);
        }))
      ctx.Fail("input X must be float, double, int64 or int32");
  }

 private:
  float threshold_;
};

ONYX_REGISTER_KERNEL("CPU", "ai.onnx.ml", "Binarizer", 1, kOpsetMax, Binarizer);

}  // namespace
}  // namespace onyx::ml
