// HannWindow, HammingWindow, BlackmanWindow (opset 17): generalized cosine windows
//   w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), N = size (periodic) or size - 1,
// written in output_datatype (any numeric type; float by default).
#include <cmath>
#include <numbers>

#include "base/type_traits.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

// a0, a1, a2 of each window.
template <int kWindow>  // 0 Hann, 1 Hamming, 2 Blackman
struct Coefficients;
template <>
struct Coefficients<0> {
  static constexpr double a0 = 0.5, a1 = 0.5, a2 = 0.0;
};
template <>
struct Coefficients<1> {
  static constexpr double a0 = 25.0 / 46.0, a1 = 21.0 / 46.0, a2 = 0.0;
};
template <>
struct Coefficients<2> {
  static constexpr double a0 = 0.42, a1 = 0.5, a2 = 0.08;
};

template <typename T>
T CastDouble(double v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>)
    return T(static_cast<float>(v));
  else
    return static_cast<T>(v);
}

template <int kWindow>
class CosineWindow final : public OpKernel {
 public:
  explicit CosineWindow(const KernelInfo& info)
      : periodic_(info.GetIntOr("periodic", 1) != 0),
        output_type_(static_cast<DataType>(info.GetIntOr("output_datatype", static_cast<int64_t>(DataType::kFloat)))) {
    if (!TryDispatch(NumericTypes{}, output_type_, [](auto) {}))
      info.Fail(StrCat("output_datatype ", static_cast<int>(output_type_), " is not a numeric type"));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& size_t_in = ctx.required_input(0);
    if (size_t_in.size() != 1 || size_t_in.rank() > 1)
      ctx.Fail(StrCat("size must be a scalar, got ", size_t_in.Describe()));
    int64_t size = 0;
    if (size_t_in.dtype() == DataType::kInt64)
      size = size_t_in.data<int64_t>()[0];
    else if (size_t_in.dtype() == DataType::kInt32)
      size = size_t_in.data<int32_t>()[0];
    else
      ctx.Fail("size must be int32 or int64");
    if (size < 0) ctx.Fail(StrCat("size must be non-negative, got ", size));
    using K = Coefficients<kWindow>;
    const double denom = static_cast<double>(periodic_ ? size : size - 1);
    Tensor& y = ctx.AllocateOutput(0, output_type_, {size});
    Dispatch(NumericTypes{}, output_type_, ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* out = y.data<T>();
      for (int64_t n = 0; n < size; ++n) {
        // A one-point symmetric window has N = 0; its single value is the window's peak, 1.
        const double phase = denom > 0.0 ? 2.0 * std::numbers::pi * static_cast<double>(n) / denom : 0.0;
        const double v = denom > 0.0 ? K::a0 - K::a1 * std::cos(phase) + K::a2 * std::cos(2.0 * phase) : 1.0;
        out[n] = CastDouble<T>(v);
      }
    });
  }

 private:
  bool periodic_;
  DataType output_type_;
};

ONYX_CPU_KERNEL("HannWindow", 17, kOpsetMax, CosineWindow<0>);
ONYX_CPU_KERNEL("HammingWindow", 17, kOpsetMax, CosineWindow<1>);
ONYX_CPU_KERNEL("BlackmanWindow", 17, kOpsetMax, CosineWindow<2>);

}  // namespace
}  // namespace onyx
