// NonZero: the coordinates of the non-zero elements, [rank, count] int64 in row-major order. A
// scalar counts as 1-D (numpy's behaviour), giving [1, count].
#include "providers/cpu/kernels/tensor/tensor_util.h"

namespace onyx {
namespace tensor_kernels {
namespace {

using NumericAndBool = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                                uint16_t, uint32_t, uint64_t, bool>;

class NonZero final : public OpKernel {
 public:
  explicit NonZero(const KernelInfo&) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Shape shape = x.rank() == 0 ? Shape{1} : x.shape();
    const size_t r = shape.size();
    Dispatch(NumericAndBool{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* p = x.data<T>();
      auto nonzero = [&](int64_t i) {
        if constexpr (std::is_same_v<T, bool>) return p[i];
        else return ToCompute(p[i]) != ComputeType<T>(0);
      };
      int64_t count = 0;
      for (int64_t i = 0; i < x.size(); ++i) count += nonzero(i) ? 1 : 0;
      Tensor& y = ctx.AllocateOutput(0, DataType::kInt64, {static_cast<int64_t>(r), count});
      int64_t* out = y.data<int64_t>();
      std::vector<int64_t> idx(r, 0);
      int64_t k = 0;
      for (int64_t i = 0; i < x.size(); ++i) {
        if (nonzero(i)) {
          for (size_t d = 0; d < r; ++d) out[static_cast<int64_t>(d) * count + k] = idx[d];
          ++k;
        }
        for (size_t d = r; d-- > 0;) {
          if (++idx[d] < shape[d]) break;
          idx[d] = 0;
        }
      }
    });
  }
};

ONYX_CPU_KERNEL("NonZero", 9, kOpsetMax, NonZero);

}  // namespace
}  // namespace tensor_kernels
}  // namespace onyx
