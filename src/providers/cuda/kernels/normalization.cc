// Softmax/LogSoftmax (opset 1-12: the input coerced to 2-D at axis; 13+: one axis) and
// LayerNormalization (Y only) on CUDA, in float, float16 and bfloat16 (normalization.cu).
#include "providers/cuda/kernels/kernel_util.h"

namespace onyx::cuda {
namespace {

int64_t Product(const Shape& s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= s[i];
  return p;
}

class Softmax final : public CudaKernel {
 public:
  Softmax(const KernelInfo& info, bool log)
      : log_(log), opset_(info.opset()), axis_(info.GetIntOr("axis", info.opset() >= 13 ? -1 : 1)) {}
  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const int64_t rank = static_cast<int64_t>(x.rank());
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    if (axis < 0 || axis >= std::max<int64_t>(rank, 1)) ctx.Fail(StrCat("axis ", axis_, " is out of range"));
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.shape());
    const size_t a = static_cast<size_t>(axis);
    if (opset_ < 13) {
      LaunchSoftmax(ToDtype(x.dtype()), x.raw_data(), y.raw_data(), Product(x.shape(), 0, a),
                    Product(x.shape(), a, x.rank()), 1, log_, stream());
    } else {
      LaunchSoftmax(ToDtype(x.dtype()), x.raw_data(), y.raw_data(), Product(x.shape(), 0, a),
                    rank == 0 ? 1 : x.dim(a), Product(x.shape(), a + 1, x.rank()), log_, stream());
    }
    CheckLaunch(ctx);
  }

 private:
  bool log_;
  int opset_;
  int64_t axis_;
};

class LayerNorm final : public CudaKernel {
 public:
  explicit LayerNorm(const KernelInfo& info)
      : axis_(info.GetIntOr("axis", -1)), epsilon_(info.GetFloatOr("epsilon", 1e-5f)) {}
  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& scale = ctx.required_input(1);
    const Tensor* bias = ctx.input(2);
    const int64_t rank = static_cast<int64_t>(x.rank());
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    if (axis < 0 || axis >= rank) ctx.Fail(StrCat("axis ", axis_, " is out of range"));
    const int64_t n = Product(x.shape(), static_cast<size_t>(axis), x.rank());
    // The CUDA kernel applies scale and bias element by element over the normalized block.
    if (scale.size() != n || (bias != nullptr && bias->size() != n))
      ctx.Fail(StrCat("CUDA's LayerNormalization needs Scale and B of the normalized shape's ", n, " elements"));
    if (scale.dtype() != x.dtype() || (bias != nullptr && bias->dtype() != x.dtype()))
      ctx.Fail("CUDA's LayerNormalization needs Scale and B of X's dtype");
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.shape());
    LaunchLayerNorm(ToDtype(x.dtype()), x.raw_data(), scale.raw_data(), bias != nullptr ? bias->raw_data() : nullptr,
                    y.raw_data(), n == 0 ? 0 : x.size() / n, n, epsilon_, stream());
    CheckLaunch(ctx);
  }

 private:
  int64_t axis_;
  float epsilon_;
};

std::string OnlyY(const ir::Node& node) {
  for (size_t i = 1; i < node.outputs.size(); ++i)
    if (!node.outputs[i].empty())
      return "CUDA's LayerNormalization computes Y only (its Mean and InvStdDev outputs are not implemented)";
  return "";
}

ONYX_REGISTER_KERNEL_FN(kCudaProvider, "", "Softmax", 1, kOpsetMax,
                        [](const KernelInfo& info) { return std::make_unique<Softmax>(info, false); });
ONYX_REGISTER_KERNEL_FN(kCudaProvider, "", "LogSoftmax", 1, kOpsetMax,
                        [](const KernelInfo& info) { return std::make_unique<Softmax>(info, true); });
const KernelTypesRegistrar kSoftmaxTypes(kCudaProvider, "", "Softmax", KernelTypes{kFloatTypes, 0, {}, nullptr});
const KernelTypesRegistrar kLogSoftmaxTypes(kCudaProvider, "", "LogSoftmax", KernelTypes{kFloatTypes, 0, {}, nullptr});
ONYX_CUDA_KERNEL("LayerNormalization", 17, kOpsetMax, LayerNorm, KernelTypes{kFloatTypes, 0, {}, OnlyY});

}  // namespace
}  // namespace onyx::cuda
