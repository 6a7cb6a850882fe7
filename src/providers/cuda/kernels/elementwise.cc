// Add/Sub/Mul/Div with broadcasting and Relu/Sigmoid/Tanh/Erf/Gelu on CUDA, in float, float16
// and bfloat16 (elementwise.cu).
#include "providers/cuda/kernels/kernel_util.h"

namespace onyx::cuda {
namespace {

class Binary final : public CudaKernel {
 public:
  Binary(const KernelInfo& info, BinaryOp op) : op_(op) {}
  void Compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    if (a.dtype() != b.dtype()) ctx.Fail("inputs of different dtypes");
    Shape shape;
    const Strided s = Broadcast(a.shape(), b.shape(), shape);
    Tensor& y = ctx.AllocateOutput(0, a.dtype(), shape);
    LaunchBinary(op_, ToDtype(a.dtype()), a.raw_data(), b.raw_data(), y.raw_data(), y.size(), s, stream());
    CheckLaunch(ctx);
  }

 private:
  BinaryOp op_;
};

class Unary final : public CudaKernel {
 public:
  Unary(const KernelInfo& info, UnaryOp op) : op_(op) {
    if (op == UnaryOp::kGelu && info.GetStringOr("approximate", "none") == "tanh") op_ = UnaryOp::kGeluTanh;
  }
  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.shape());
    LaunchUnary(op_, ToDtype(x.dtype()), x.raw_data(), y.raw_data(), y.size(), stream());
    CheckLaunch(ctx);
  }

 private:
  UnaryOp op_;
};

// One registration per op: the factories pass the op to the shared classes.
std::unique_ptr<OpKernel> MakeBinary(const KernelInfo& info, BinaryOp op) { return std::make_unique<Binary>(info, op); }
std::unique_ptr<OpKernel> MakeUnary(const KernelInfo& info, UnaryOp op) { return std::make_unique<Unary>(info, op); }

std::string GeluCheck(const ir::Node& node) {
  const ir::Attribute* a = node.FindAttribute("approximate");
  if (a == nullptr || a->s == "none" || a->s == "tanh") return "";
  return StrCat("CUDA's Gelu takes approximate 'none' or 'tanh', not '", a->s, "'");
}

#define ONYX_CUDA_ELEMENTWISE(domain, op, since, Make, value, ...)                                          \
  ONYX_REGISTER_KERNEL_FN(kCudaProvider, domain, op, since, kOpsetMax,                                       \
                          [](const KernelInfo& info) { return Make(info, value); });                         \
  static KernelTypesRegistrar ONYX_CONCAT(cuda_elementwise_types_, __COUNTER__)(kCudaProvider, domain, op,   \
                                                                                KernelTypes{kFloatTypes, 0, {}, __VA_ARGS__})

ONYX_CUDA_ELEMENTWISE("", "Add", 7, MakeBinary, BinaryOp::kAdd, nullptr);
ONYX_CUDA_ELEMENTWISE("", "Sub", 7, MakeBinary, BinaryOp::kSub, nullptr);
ONYX_CUDA_ELEMENTWISE("", "Mul", 7, MakeBinary, BinaryOp::kMul, nullptr);
ONYX_CUDA_ELEMENTWISE("", "Div", 7, MakeBinary, BinaryOp::kDiv, nullptr);
ONYX_CUDA_ELEMENTWISE("", "Relu", 6, MakeUnary, UnaryOp::kRelu, nullptr);
ONYX_CUDA_ELEMENTWISE("", "Sigmoid", 6, MakeUnary, UnaryOp::kSigmoid, nullptr);
ONYX_CUDA_ELEMENTWISE("", "Tanh", 6, MakeUnary, UnaryOp::kTanh, nullptr);
ONYX_CUDA_ELEMENTWISE("", "Erf", 9, MakeUnary, UnaryOp::kErf, nullptr);
ONYX_CUDA_ELEMENTWISE("", "Gelu", 20, MakeUnary, UnaryOp::kGelu, GeluCheck);
ONYX_CUDA_ELEMENTWISE("com.microsoft", "Gelu", 1, MakeUnary, UnaryOp::kGelu, nullptr);

}  // namespace
}  // namespace onyx::cuda
