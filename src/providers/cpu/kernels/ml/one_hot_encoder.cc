// OneHotEncoder (ai.onnx.ml 1): Y = X.shape + [len(categories)] of 0/1 floats, categories from
// cats_int64s (numeric X, cast to int64) or cats_strings (string X). With zeros=0 a value that is
// not a category is an error; with zeros=1 its row stays all zero.
#include <unordered_map>

#include "providers/cpu/kernels/ml/ml_common.h"

namespace onyx::ml {
namespace {

class OneHotEncoder final : public OpKernel {
 public:
  explicit OneHotEncoder(const KernelInfo& info) : zeros_(info.GetIntOr("zeros", 1) != 0) {
    const auto ints = info.GetIntsOr("cats_int64s", {});
    const auto strings = info.GetStringsOr("cats_strings", {});
    if (ints.empty() == strings.empty()) info.Fail("exactly one of cats_int64s and cats_strings must be given");
    num_categories_ = static_cast<int64_t>(ints.empty() ? strings.size() : ints.size());
    for (size_t i = 0; i < ints.size(); ++i) int_index_.emplace(ints[i], static_cast<int64_t>(i));
    for (size_t i = 0; i < strings.size(); ++i) string_index_.emplace(strings[i], static_cast<int64_t>(i));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Shape out_shape = x.shape();
    out_shape.push_back(num_categories_);
    Tensor& y = ctx.AllocateOutput(0, DataType::kFloat, out_shape);
    float* py = y.data<float>();
    std::fill(py, py + y.size(), 0.0f);
    auto set = [&](int64_t i, int64_t cat, const auto& value) {
      if (cat >= 0) py[i * num_categories_ + cat] = 1.0f;
      else if (!zeros_) ctx.Fail(StrCat("value ", value, " at X[", i, "] is not a category and zeros=0"));
    };
    if (x.dtype() == DataType::kString) {
      if (string_index_.empty()) ctx.Fail("string input needs cats_strings");
      const std::string* px = x.data<std::string>();
      for (int64_t i = 0; i < x.size(); ++i) {
        auto it = string_index_.find(px[i]);
        set(i, it == string_index_.end() ? -1 : it->second, px[i]);
      }
      return;
    }
    if (int_index_.empty()) ctx.Fail("numeric input needs cats_int64s");
    if (!TryDispatch(MlNumericTypes{}, x.dtype(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          const T* px = x.data<T>();
          for (int64_t i = 0; i < x.size(); ++i) {
            const int64_t v = static_cast<int64_t>(px[i]);
            auto it = int_index_.find(v);
            set(i, it == int_index_.end() ? -1 : it->second, v);
          }
        }))
      ctx.Fail("input X must be string, int64, int32, float or double");
  }

 private:
  bool zeros_;
  int64_t num_categories_ = 0;
  std::unordered_map<int64_t, int64_t> int_index_;
  std::unordered_map<std::string, int64_t> string_index_;
};

ONYX_REGISTER_KERNEL("CPU", "ai.onnx.ml", "OneHotEncoder", 1, kOpsetMax, OneHotEncoder);

}  // namespace
}  // namespace onyx::ml
