// ArrayFeatureExtractor (ai.onnx.ml 1): picks columns of the last axis of X by index.
// Output shape: X.shape[:-1] + [len(Y)], and [1, len(Y)] for a 1-D X (as ONNX Runtime does).
#include "providers/cpu/kernels/ml/ml_common.h"

namespace onyx::ml {
namespace {

using ExtractorTypes = TypeList<float, double, int64_t, int32_t, std::string>;

class ArrayFeatureExtractor final : public OpKernel {
 public:
  explicit ArrayFeatureExtractor(const KernelInfo&) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& y = ctx.required_input(1);
    if (x.rank() == 0) ctx.Fail("input X must have at least one dimension");
    if (y.dtype() != DataType::kInt64) ctx.Fail("input Y (indices) must be int64");
    const int64_t stride = x.dim(x.rank() - 1);
    const int64_t num_indices = y.size();
    if (num_indices == 0) ctx.Fail("input Y (indices) must not be empty");
    const int64_t* idx = y.data<int64_t>();
    for (int64_t i = 0; i < num_indices; ++i)
      if (idx[i] < 0 || idx[i] >= stride)
        ctx.Fail(StrCat("index ", idx[i], " at Y[", i, "] is out of range [0, ", stride, ")"));
    Shape out_shape;
    if (x.rank() == 1) {
      out_shape = {1, num_indices};
    } else {
      out_shape.assign(x.shape().begin(), x.shape().end() - 1);
      out_shape.push_back(num_indices);
    }
    const int64_t rows = stride == 0 ? 0 : x.size() / stride;
    Tensor& out = ctx.AllocateOutput(0, x.dtype(), out_shape);
    if (!TryDispatch(ExtractorTypes{}, x.dtype(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          const T* px = x.data<T>();
          T* po = out.data<T>();
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t j = 0; j < num_indices; ++j) po[r * num_indices + j] = px[r * stride + idx[j]];
        }))
      ctx.Fail("input X must be float, double, int64, int32 or string");
  }
};

ONYX_REGISTER_KERNEL("CPU", "ai.onnx.ml", "ArrayFeatureExtractor", 1, kOpsetMax, ArrayFeatureExtractor);

}  // namespace
}  // namespace onyx::ml
