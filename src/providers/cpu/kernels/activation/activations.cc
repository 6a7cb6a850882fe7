// Pointwise activations: Relu LeakyRelu Elu Selu Celu Sigmoid HardSigmoid HardSwish Softplus
// Softsign ThresholdedRelu Gelu Mish Shrink Swish. Attributes are parsed once per node; opset
// 1-5 forms only add `consumed_inputs`, which is ignored. Float16/BFloat16 compute in float
// and round once; double computes in double. Sigmoid, Softplus, Gelu, Mish and Swish on float /
// float16 / bfloat16 run linalg's vectorized math (functors with a Vec() form).
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

#include "base/type_traits.h"
#include "linalg/vector_math.h"
#include "providers/cpu/kernels/math/elementwise.h"
#include "providers/cpu/kernels/quantization/qdq_neighbours.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

using elementwise::kCheapCost;
using elementwise::kTranscendentalCost;

// Numerically stable pieces shared by several activations.
template <typename C>
inline C StableSigmoid(C x) {
  if (x >= C(0)) return C(1) / (C(1) + std::exp(-x));
  const C e = std::exp(x);
  return e / (C(1) + e);
}
template <typename C>
inline C StableSoftplus(C x) {  // log(1 + e^x) without overflow for large x
  return x > C(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

// Each functor is built from the node's attributes and maps one compute-type value.
struct ReluFn {
  static constexpr double kCost = kCheapCost;
  explicit ReluFn(const KernelInfo&) {}
  template <typename C>
  C operator()(C x) const { return x < C(0) ? C(0) : x; }  // NaN passes through, as numpy.maximum
};

struct LeakyReluFn {
  static constexpr double kCost = kCheapCost;
  explicit LeakyReluFn(const KernelInfo& info) : alpha(info.GetFloatOr("alpha", 0.01f)) {}
  template <typename C>
  C operator()(C x) const { return x < C(0) ? static_cast<C>(alpha) * x : x; }
  float alpha;
};

struct EluFn {
  static constexpr double kCost = kTranscendentalCost;
  explicit EluFn(const KernelInfo& info) : alpha(info.GetFloatOr("alpha", 1.0f)) {}
  template <typename C>
  C operator()(C x) const { return x < C(0) ? static_cast<C>(alpha) * std::expm1(x) : x; }
  float alpha;
};

struct SeluFn {
  static constexpr double kCost = kTranscendentalCost;
  explicit SeluFn(const KernelInfo& info)
      : alpha(info.GetFloatOr("alpha", 1.67326319217681884765625f)),
        gamma(info.GetFloatOr("gamma", 1.05070102214813232421875f)) {}
  template <typename C>
  C operator()(C x) const {
    const C g = static_cast<C>(gamma);
    return x <= C(0) ? g * (static_cast<C>(alpha) * std::exp(x) - static_cast<C>(alpha)) : g * x;
  }
  float alpha, gamma;
};

struct CeluFn {
  static constexpr double kCost = kTranscendentalCost;
  explicit CeluFn(const KernelInfo& info) : alpha(info.GetFloatOr("alpha", 1.0f)) {
    if (alpha == 0.0f) info.Fail("attribute 'alpha' must not be 0");
  }
  template <typename C>
  C operator()(C x) const {
    const C a = static_cast<C>(alpha);
    const C neg = a * std::expm1(x / a);
    return (x > C(0) ? x : C(0)) + (neg < C(0) ? neg : C(0));
  }
  float alpha;
};

// In a quantized graph a float Sigmoid rounds as ONNX Runtime's does (its result is quantized
// on, where a last bit moves a code or a dynamic range): linalg::VecSigmoidAsOnnxRuntime.
struct SigmoidFn {
  static constexpr double kCost = kTranscendentalCost;
  explicit SigmoidFn(const KernelInfo& info) : as_onnx_runtime(InQuantizedGraph(info)) {}
  template <typename C>
  C operator()(C x) const { return StableSigmoid(x); }
  auto Vec() const { return as_onnx_runtime ? &linalg::VecSigmoidAsOnnxRuntime : &linalg::VecSigmoid; }
  bool as_onnx_runtime;
};

struct HardSigmoidFn {
  static constexpr double kCost = kCheapCost;
  explicit HardSigmoidFn(const KernelInfo& info)
      : alpha(info.GetFloatOr("alpha", 0.2f)), beta(info.GetFloatOr("beta", 0.5f)) {}
  template <typename C>
  C operator()(C x) const {
    const C v = static_cast<C>(alpha) * x + static_cast<C>(beta);
    return v < C(0) ? C(0) : (v > C(1) ? C(1) : v);
  }
  float alpha, beta;
};

struct HardSwishFn {  // x * HardSigmoid(x) with alpha = 1/6, beta = 0.5
  static constexpr double kCost = kCheapCost;
  explicit HardSwishFn(const KernelInfo&) {}
  template <typename C>
  C operator()(C x) const {
    const C v = x / C(6) + C(0.5);
    return x * (v < C(0) ? C(0) : (v > C(1) ? C(1) : v));
  }
};

struct SoftplusFn {
  static constexpr double kCost = kTranscendentalCost;
  explicit SoftplusFn(const KernelInfo&) {}
  template <typename C>
  C operator()(C x) const { return StableSoftplus(x); }
  auto Vec() const { return &linalg::VecSoftplus; }
};

struct SoftsignFn {
  static constexpr double kCost = 4.0;
  explicit SoftsignFn(const KernelInfo&) {}
  template <typename C>
  C operator()(C x) const { return x / (C(1) + std::fabs(x)); }
};

struct ThresholdedReluFn {
  static constexpr double kCost = kCheapCost;
  explicit ThresholdedReluFn(const KernelInfo& info) : alpha(info.GetFloatOr("alpha", 1.0f)) {}
  template <typename C>
  C operator()(C x) const { return x > static_cast<C>(alpha) ? x : C(0); }
  float alpha;
};

struct GeluFn {
  static constexpr double kCost = kTranscendentalCost;
  explicit GeluFn(const KernelInfo& info) {
    const std::string approximate = info.GetStringOr("approximate", "none");
    if (approximate != "none" && approximate != "tanh")
      info.Fail(StrCat("attribute 'approximate' must be \"none\" or \"tanh\", got \"", approximate, "\""));
    tanh = approximate == "tanh";
  }
  template <typename C>
  C operator()(C x) const {
    if (tanh) {
      const C k = static_cast<C>(0.7978845608028654);  // sqrt(2 / pi)
      return C(0.5) * x * (C(1) + std::tanh(k * (x + static_cast<C>(0.044715) * x * x * x)));
    }
    return C(0.5) * x * (C(1) + std::erf(x * static_cast<C>(0.7071067811865476)));  // x / sqrt(2)
  }
  auto Vec() const { return tanh ? &linalg::VecGeluTanh : &linalg::VecGeluErf; }
  bool tanh = false;
};

// Composite vector forms (Mish, Swish with alpha) work through a float buffer on the stack.
constexpr size_t kVecChunk = 1024;

struct MishFn {
  static constexpr double kCost = 2 * kTranscendentalCost;
  explicit MishFn(const KernelInfo&) {}
  template <typename C>
  C operator()(C x) const { return x * std::tanh(StableSoftplus(x)); }
  auto Vec() const {
    return [](const float* x, float* y, size_t n) {
      float t[kVecChunk];
      for (size_t i = 0; i < n; i += kVecChunk) {
        const size_t m = std::min(kVecChunk, n - i);
        linalg::VecSoftplus(x + i, t, m);
        linalg::VecTanh(t, t, m);
        linalg::VecBinary(linalg::BinaryOp::kMul, x + i, t, y + i, m);
      }
    };
  }
};

struct SwishFn {
  static constexpr double kCost = kTranscendentalCost;
  explicit SwishFn(const KernelInfo& info) : alpha(info.GetFloatOr("alpha", 1.0f)) {}
  template <typename C>
  C operator()(C x) const { return x * StableSigmoid(static_cast<C>(alpha) * x); }
  auto Vec() const {
    return [a = alpha](const float* x, float* y, size_t n) {
      if (a == 1.0f) return linalg::VecSilu(x, y, n);
      float t[kVecChunk];
      for (size_t i = 0; i < n; i += kVecChunk) {
        const size_t m = std::min(kVecChunk, n - i);
        linalg::VecBinaryScalar(linalg::BinaryOp::kMul, x + i, a, t, m);
        linalg::VecSigmoid(t, t, m);
        linalg::VecBinary(linalg::BinaryOp::kMul, x + i, t, y + i, m);
      }
    };
  }
  float alpha;
};

// Shrink admits every numeric type: integers compute in double and convert back.
struct ShrinkFn {
  static constexpr double kCost = kCheapCost;
  explicit ShrinkFn(const KernelInfo& info) : bias(info.GetFloatOr("bias", 0.0f)), lambd(info.GetFloatOr("lambd", 0.5f)) {}
  template <typename C>
  C operator()(C x) const {
    if constexpr (std::is_integral_v<C>) {
      return elementwise::SaturatingCast<C>(Apply(static_cast<double>(x)));
    } else {
      return Apply(x);
    }
  }
  template <typename F>
  F Apply(F x) const {
    const F l = static_cast<F>(lambd), b = static_cast<F>(bias);
    return x < -l ? x + b : (x > l ? x - b : F(0));
  }
  float bias, lambd;
};

template <typename Fn, typename Types>
class Activation final : public OpKernel {
 public:
  explicit Activation(const KernelInfo& info) : fn_(info) {}
  uint32_t InPlaceInputsFor(size_t output) const override { return output == 0 ? 1u : 0u; }  // pointwise

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.shape());
    Dispatch(Types{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const Fn fn = fn_;
      if constexpr (requires { fn.Vec(); }) {
        if constexpr (elementwise::kIsFloatOrHalf<T>) {
          elementwise::VecMap(ctx.thread_pool(), x.data<T>(), y.data<T>(), x.size(),
                              elementwise::kVecTranscendentalCost, fn.Vec());
          return;
        }
      }
      elementwise::Map(ctx.thread_pool(), x.data<T>(), y.data<T>(), x.size(), Fn::kCost,
                       [fn](T v) { return FromCompute<T>(fn(ToCompute(v))); });
    });
  }

 private:
  Fn fn_;
};

// Aliases keep the template's comma out of the registration macro.
template <typename Fn>
using FloatActivation = Activation<Fn, FloatTypes>;
template <typename Fn>
using SignedActivation = Activation<Fn, SignedTypes>;
template <typename Fn>
using NumericActivation = Activation<Fn, NumericTypes>;
#define ONYX_ACTIVATION(op, since, until, Fn, Types) ONYX_CPU_KERNEL(op, since, until, Types##Activation<Fn>)

ONYX_ACTIVATION("Relu", 1, 5, ReluFn, Float);
ONYX_ACTIVATION("Relu", 6, 13, ReluFn, Float);
ONYX_ACTIVATION("Relu", 14, kOpsetMax, ReluFn, Signed);  // signed integers from opset 14
ONYX_ACTIVATION("LeakyRelu", 1, 5, LeakyReluFn, Float);
ONYX_ACTIVATION("LeakyRelu", 6, kOpsetMax, LeakyReluFn, Float);
ONYX_ACTIVATION("Elu", 1, 5, EluFn, Float);
ONYX_ACTIVATION("Elu", 6, kOpsetMax, EluFn, Float);
ONYX_ACTIVATION("Selu", 1, 5, SeluFn, Float);
ONYX_ACTIVATION("Selu", 6, kOpsetMax, SeluFn, Float);
ONYX_ACTIVATION("Celu", 12, kOpsetMax, CeluFn, Float);
ONYX_ACTIVATION("Sigmoid", 1, 5, SigmoidFn, Float);
ONYX_ACTIVATION("Sigmoid", 6, kOpsetMax, SigmoidFn, Float);
ONYX_ACTIVATION("HardSigmoid", 1, 5, HardSigmoidFn, Float);
ONYX_ACTIVATION("HardSigmoid", 6, kOpsetMax, HardSigmoidFn, Float);
ONYX_ACTIVATION("HardSwish", 14, kOpsetMax, HardSwishFn, Float);
ONYX_ACTIVATION("Softplus", 1, kOpsetMax, SoftplusFn, Float);
ONYX_ACTIVATION("Softsign", 1, kOpsetMax, SoftsignFn, Float);
ONYX_ACTIVATION("ThresholdedRelu", 10, kOpsetMax, ThresholdedReluFn, Float);
ONYX_ACTIVATION("Gelu", 20, kOpsetMax, GeluFn, Float);
ONYX_ACTIVATION("Mish", 18, kOpsetMax, MishFn, Float);
ONYX_ACTIVATION("Shrink", 9, kOpsetMax, ShrinkFn, Numeric);
ONYX_ACTIVATION("Swish", 24, kOpsetMax, SwishFn, Float);
#undef ONYX_ACTIVATION

}  // namespace
}  // namespace onyx
