// Unary math: Abs Neg Reciprocal Floor Ceil Round Sign Sqrt Exp Log Erf Tanh, the trigonometric
// and hyperbolic functions, IsNaN and IsInf. Opset 1-5 forms only add `consumed_inputs`, which
// is ignored. Float16/BFloat16 compute in float and round once.
#include <cmath>
#include <type_traits>

#include "base/float_types.h"
#include "base/type_traits.h"
#include "linalg/vector_math.h"
#include "providers/cpu/kernels/math/elementwise.h"
#include "providers/cpu/kernels/quantization/qdq_neighbours.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

using elementwise::kCheapCost;
using elementwise::kTranscendentalCost;

// Each function maps one compute-type value (float, double or an integer type).
struct AbsFn {
  static constexpr double kCost = kCheapCost;
  template <typename C>
  C operator()(C x) const {
    if constexpr (std::is_floating_point_v<C>) return std::fabs(x);
    else if constexpr (std::is_signed_v<C>) return x < 0 ? elementwise::WrapNeg(x) : x;
    else return x;
  }
};
struct NegFn {
  static constexpr double kCost = kCheapCost;
  template <typename C>
  C operator()(C x) const { return elementwise::WrapNeg(x); }
};
struct SignFn {
  static constexpr double kCost = kCheapCost;
  template <typename C>
  C operator()(C x) const {
    if constexpr (std::is_unsigned_v<C>) {
      return x > C(0) ? C(1) : C(0);
    } else {
      if constexpr (std::is_floating_point_v<C>)
        if (std::isnan(x)) return x;
      return x > C(0) ? C(1) : (x < C(0) ? C(-1) : C(0));
    }
  }
};
struct ReciprocalFn {
  static constexpr double kCost = 4.0;
  template <typename C>
  C operator()(C x) const { return C(1) / x; }
};
struct FloorFn {
  static constexpr double kCost = kCheapCost;
  template <typename C>
  C operator()(C x) const { return std::floor(x); }
};
struct CeilFn {
  static constexpr double kCost = kCheapCost;
  template <typename C>
  C operator()(C x) const { return std::ceil(x); }
};
struct RoundFn {  // halves to even, as numpy.round
  static constexpr double kCost = kCheapCost;
  template <typename C>
  C operator()(C x) const { return std::nearbyint(x); }
};
struct SqrtFn {
  static constexpr double kCost = 4.0;
  template <typename C>
  C operator()(C x) const { return std::sqrt(x); }
};

#define ONYX_TRANSCENDENTAL_FN(Name, expr)            \
  struct Name {                                      \
    static constexpr double kCost = kTranscendentalCost; \
    template <typename C>                            \
    C operator()(C x) const { return expr; }         \
  };
ONYX_TRANSCENDENTAL_FN(ExpFn, std::exp(x))
ONYX_TRANSCENDENTAL_FN(LogFn, std::log(x))
ONYX_TRANSCENDENTAL_FN(TanhFn, std::tanh(x))
ONYX_TRANSCENDENTAL_FN(SinFn, std::sin(x))
ONYX_TRANSCENDENTAL_FN(CosFn, std::cos(x))
ONYX_TRANSCENDENTAL_FN(TanFn, std::tan(x))
ONYX_TRANSCENDENTAL_FN(AsinFn, std::asin(x))
ONYX_TRANSCENDENTAL_FN(AcosFn, std::acos(x))
ONYX_TRANSCENDENTAL_FN(AtanFn, std::atan(x))
ONYX_TRANSCENDENTAL_FN(SinhFn, std::sinh(x))
ONYX_TRANSCENDENTAL_FN(CoshFn, std::cosh(x))
ONYX_TRANSCENDENTAL_FN(AsinhFn, std::asinh(x))
ONYX_TRANSCENDENTAL_FN(AcoshFn, std::acosh(x))
ONYX_TRANSCENDENTAL_FN(AtanhFn, std::atanh(x))
#undef ONYX_TRANSCENDENTAL_FN

// Erf admits integer tensors too (opset 9): compute in double, truncate back.
struct ErfFn {
  static constexpr double kCost = kTranscendentalCost;
  template <typename C>
  C operator()(C x) const {
    if constexpr (std::is_integral_v<C>) return elementwise::SaturatingCast<C>(std::erf(static_cast<double>(x)));
    else return std::erf(x);
  }
};

// The vectorized float form of a function, where linalg has one. Whether there is one is a flag
// of its own: under g++'s sanitizers (no null-pointer-check deletion) `&function != nullptr` is
// not a constant expression, so `if constexpr` cannot test the pointer.
using VecFn = void (*)(const float*, float*, size_t);
template <typename Fn>
inline constexpr VecFn kVecOf = nullptr;
template <typename Fn>
inline constexpr bool kHasVec = false;
template <>
inline constexpr VecFn kVecOf<ExpFn> = &linalg::VecExp;
template <>
inline constexpr VecFn kVecOf<LogFn> = &linalg::VecLog;
template <>
inline constexpr VecFn kVecOf<TanhFn> = &linalg::VecTanh;
template <>
inline constexpr VecFn kVecOf<ErfFn> = &linalg::VecErf;
template <>
inline constexpr bool kHasVec<ExpFn> = true;
template <>
inline constexpr bool kHasVec<LogFn> = true;
template <>
inline constexpr bool kHasVec<TanhFn> = true;
template <>
inline constexpr bool kHasVec<ErfFn> = true;

template <typename Fn, typename Types>
class UnaryMath final : public OpKernel {
 public:
  explicit UnaryMath(const KernelInfo& info) : vec_(VecFor(info)) {}
  uint32_t InPlaceInputsFor(size_t output) const override { return output == 0 ? 1u : 0u; }  // pointwise

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.shape());
    Dispatch(Types{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (kHasVec<Fn> && elementwise::kIsFloatOrHalf<T>) {
        elementwise::VecMap(ctx.thread_pool(), x.data<T>(), y.data<T>(), x.size(), elementwise::kVecTranscendentalCost,
                            vec_);
      } else {
        elementwise::Map(ctx.thread_pool(), x.data<T>(), y.data<T>(), x.size(), Fn::kCost,
                         [](T v) { return FromCompute<T>(Fn{}(ToCompute(v))); });
      }
    });
  }

 private:
  // In a quantized graph an Erf (a quantized GELU's) or a Tanh rounds as ONNX Runtime's does: its
  // result is quantized on, where a last bit moves a code.
  static VecFn VecFor(const KernelInfo& info) {
    if constexpr (std::is_same_v<Fn, ErfFn>) {
      if (InQuantizedGraph(info)) return &linalg::VecErfAsOnnxRuntime;
    }
    if constexpr (std::is_same_v<Fn, TanhFn>) {
      if (InQuantizedGraph(info)) return &linalg::VecTanhAsOnnxRuntime;
    }
    return kVecOf<Fn>;
  }

  VecFn vec_;
};

// Aliases keep the template's comma out of the registration macro.
template <typename Fn>
using FloatUnary = UnaryMath<Fn, FloatTypes>;
template <typename Fn>
using SignedUnary = UnaryMath<Fn, SignedTypes>;
template <typename Fn>
using NumericUnary = UnaryMath<Fn, NumericTypes>;
#define ONYX_UNARY(op, since, until, Fn, Types) ONYX_CPU_KERNEL(op, since, until, Types##Unary<Fn>)

ONYX_UNARY("Abs", 1, 5, AbsFn, Numeric);
ONYX_UNARY("Abs", 6, kOpsetMax, AbsFn, Numeric);
ONYX_UNARY("Neg", 1, 5, NegFn, Signed);
ONYX_UNARY("Neg", 6, kOpsetMax, NegFn, Signed);
ONYX_UNARY("Reciprocal", 1, 5, ReciprocalFn, Float);
ONYX_UNARY("Reciprocal", 6, kOpsetMax, ReciprocalFn, Float);
ONYX_UNARY("Floor", 1, 5, FloorFn, Float);
ONYX_UNARY("Floor", 6, kOpsetMax, FloorFn, Float);
ONYX_UNARY("Ceil", 1, 5, CeilFn, Float);
ONYX_UNARY("Ceil", 6, kOpsetMax, CeilFn, Float);
ONYX_UNARY("Sqrt", 1, 5, SqrtFn, Float);
ONYX_UNARY("Sqrt", 6, kOpsetMax, SqrtFn, Float);
ONYX_UNARY("Exp", 1, 5, ExpFn, Float);
ONYX_UNARY("Exp", 6, kOpsetMax, ExpFn, Float);
ONYX_UNARY("Log", 1, 5, LogFn, Float);
ONYX_UNARY("Log", 6, kOpsetMax, LogFn, Float);
ONYX_UNARY("Tanh", 1, 5, TanhFn, Float);
ONYX_UNARY("Tanh", 6, kOpsetMax, TanhFn, Float);
ONYX_UNARY("Round", 11, kOpsetMax, RoundFn, Float);
ONYX_UNARY("Sign", 9, kOpsetMax, SignFn, Numeric);
ONYX_UNARY("Erf", 9, kOpsetMax, ErfFn, Numeric);
ONYX_UNARY("Sin", 7, kOpsetMax, SinFn, Float);
ONYX_UNARY("Cos", 7, kOpsetMax, CosFn, Float);
ONYX_UNARY("Tan", 7, kOpsetMax, TanFn, Float);
ONYX_UNARY("Asin", 7, kOpsetMax, AsinFn, Float);
ONYX_UNARY("Acos", 7, kOpsetMax, AcosFn, Float);
ONYX_UNARY("Atan", 7, kOpsetMax, AtanFn, Float);
ONYX_UNARY("Sinh", 9, kOpsetMax, SinhFn, Float);
ONYX_UNARY("Cosh", 9, kOpsetMax, CoshFn, Float);
ONYX_UNARY("Asinh", 9, kOpsetMax, AsinhFn, Float);
ONYX_UNARY("Acosh", 9, kOpsetMax, AcoshFn, Float);
ONYX_UNARY("Atanh", 9, kOpsetMax, AtanhFn, Float);
#undef ONYX_UNARY

// IsNaN / IsInf: float types, and from opset 20 the float8 formats (read through float).
bool IsFloat8(DataType t) {
  return t == DataType::kFloat8E4M3FN || t == DataType::kFloat8E4M3FNUZ || t == DataType::kFloat8E5M2 ||
         t == DataType::kFloat8E5M2FNUZ;
}

template <typename Pred>
void Classify(KernelContext& ctx, bool allow_float8, double cost, Pred pred) {
  const Tensor& x = ctx.required_input(0);
  Tensor& y = ctx.AllocateOutput(0, DataType::kBool, x.shape());
  bool* py = y.data<bool>();
  if (IsFloat8(x.dtype())) {
    if (!allow_float8) ctx.Fail("float8 inputs need opset 20 or later");
    const DataType dt = x.dtype();
    elementwise::Map(ctx.thread_pool(), x.data<uint8_t>(), py, x.size(), cost,
                     [&](uint8_t v) { return pred(MinifloatToFloat(v, dt)); });
    return;
  }
  Dispatch(FloatTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    elementwise::Map(ctx.thread_pool(), x.data<T>(), py, x.size(), cost, [&](T v) { return pred(ToCompute(v)); });
  });
}

class IsNaN final : public OpKernel {
 public:
  explicit IsNaN(const KernelInfo& info) : float8_(info.opset() >= 20) {}
  void Compute(KernelContext& ctx) const override {
    Classify(ctx, float8_, kCheapCost, [](auto v) { return std::isnan(v); });
  }

 private:
  bool float8_;
};

class IsInf final : public OpKernel {
 public:
  explicit IsInf(const KernelInfo& info)
      : negative_(info.GetIntOr("detect_negative", 1) != 0),
        positive_(info.GetIntOr("detect_positive", 1) != 0),
        float8_(info.opset() >= 20) {}
  void Compute(KernelContext& ctx) const override {
    const bool neg = negative_, pos = positive_;
    Classify(ctx, float8_, kCheapCost,
             [neg, pos](auto v) { return std::isinf(v) && ((v > 0 && pos) || (v < 0 && neg)); });
  }

 private:
  bool negative_;
  bool positive_;
  bool float8_;
};

ONYX_CPU_KERNEL("IsNaN", 9, 19, IsNaN);
ONYX_CPU_KERNEL("IsNaN", 20, kOpsetMax, IsNaN);
ONYX_CPU_KERNEL("IsInf", 10, 19, IsInf);
ONYX_CPU_KERNEL("IsInf", 20, kOpsetMax, IsInf);

}  // namespace
}  // namespace onyx
