// CategoryMapper (ai.onnx.ml 1): maps strings to int64 (or back) through the paired lists
// cats_strings / cats_int64s; unknown values give default_int64 / default_string.
#include <unordered_map>

#include "providers/cpu/kernels/ml/ml_common.h"

namespace onyx::ml {
namespace {

class CategoryMapper final : public OpKernel {
 public:
  explicit CategoryMapper(const KernelInfo& info)
      : default_int_(info.GetIntOr("default_int64", -1)), default_string_(info.GetStringOr("default_string", "_Unused")) {
    const auto strings = info.GetStringsOr("cats_strings", {});
    const auto ints = info.GetIntsOr("cats_int64s", {});
    if (strings.size() != ints.size())
      info.Fail(StrCat("cats_strings has ", strings.size(), " values but cats_int64s has ", ints.size()));
    for (size_t i = 0; i < strings.size(); ++i) {
      to_int_.emplace(strings[i], ints[i]);  // first occurrence wins
      to_string_.emplace(ints[i], strings[i]);
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    if (x.dtype() == DataType::kString) {
      Tensor& y = ctx.AllocateOutput(0, DataType::kInt64, x.shape());
      const std::string* px = x.data<std::string>();
      int64_t* py = y.data<int64_t>();
      for (int64_t i = 0; i < x.size(); ++i) {
        auto it = to_int_.find(px[i]);
        py[i] = it == to_int_.end() ? default_int_ : it->second;
      }
    } else if (x.dtype() == DataType::kInt64) {
      Tensor& y = ctx.AllocateOutput(0, DataType::kString, x.shape());
      const int64_t* px = x.data<int64_t>();
      std::string* py = y.data<std::string>();
      for (int64_t i = 0; i < x.size(); ++i) {
        auto it = to_string_.find(px[i]);
        py[i] = it == to_string_.end() ? default_string_ : it->second;
      }
    } else {
      ctx.Fail("input X must be string or int64");
    }
  }

 private:
  int64_t default_int_;
  std::string default_string_;
  std::unordered_map<std::string, int64_t> to_int_;
  std::unordered_map<int64_t, std::string> to_string_;
};

ONYX_REGISTER_KERNEL("CPU", "ai.onnx.ml", "CategoryMapper", 1, kOpsetMax, CategoryMapper);

}  // namespace
}  // namespace onyx::ml
