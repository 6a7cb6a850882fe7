// Imputer (ai.onnx.ml 1): replaces the elements equal to replaced_value (NaN matches NaN) by an
// imputed value: one for all, or one per column (index i % X.shape[1], as ONNX Runtime does).
#include "providers/cpu/kernels/ml/ml_common.h"

namespace onyx::ml {
namespace {

class Imputer final : public OpKernel {
 public:
  explicit Imputer(const KernelInfo& info)
      : floats_(info.GetFloatsOr("imputed_value_floats", {})),
        ints_(info.GetIntsOr("imputed_value_int64s", {})),
        replaced_float_(info.GetFloatOr("replaced_value_float", 0.0f)),
        replaced_int_(info.GetIntOr("replaced_value_int64", 0)) {
    if (floats_.empty() == ints_.empty())
      info.Fail("exactly one of imputed_value_floats and imputed_value_int64s must be given");
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    if (x.rank() == 0) ctx.Fail("input X must have at least one dimension");
    const int64_t stride = x.rank() == 1 ? x.dim(0) : x.dim(1);
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.shape());
    const bool is_float = x.dtype() == DataType::kFloat || x.dtype() == DataType::kDouble;
    if (is_float && floats_.empty()) ctx.Fail("a float input needs imputed_value_floats");
    if (!is_float && ints_.empty()) ctx.Fail("an integer input needs imputed_value_int64s");
    const size_t count = is_float ? floats_.size() : ints_.size();
    if (count != 1 && static_cast<int64_t>(count) != stride)
      ctx.Fail(StrCat(count, " imputed values; expected 1 or ", stride, " (one per column)"));
    const bool per_col = count > 1;
    if (!TryDispatch(MlNumericTypes{}, x.dtype(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          const T* px = x.data<T>();
          T* py = y.data<T>();
          for (int64_t i = 0; i < x.size(); ++i) {
            const size_t k = per_col ? static_cast<size_t>(i % stride) : 0;
            bool replace;
            if constexpr (std::is_floating_point_v<T>) {
              replace = std::isnan(replaced_float_) ? std::isnan(px[i]) : px[i] == static_cast<T>(replaced_float_);
            } else {
              replace = static_cast<int64_t>(px[i]) == replaced_int_;
            }
            if (!replace) py[i] = px[i];
            else if constexpr (std::is_floating_point_v<T>) py[i] = static_cast<T>(floats_[k]);
            else py[i] = static_cast<T>(ints_[k]);
          }
        }))
      ctx.Fail("input X must be float, double, int64 or int32");
  }

 private:
  std::vector<float> floats_;
  std::vector<int64_t> ints_;
  float replaced_float_;
  int64_t replaced_int_;
};

ONYX_REGISTER_KERNEL("CPU", "ai.onnx.ml", "Imputer", 1, kOpsetMax, Imputer);

}  // namespace
}  // namespace onyx::ml
