// Add, Sub, Mul, Div, Pow and Mod. Opsets 1-6 use the legacy `broadcast`/`axis` attributes
// (B broadcast onto A); opset 7 on uses numpy broadcasting. Integer results follow numpy:
// wrap-around on overflow, Div truncates toward zero; division or modulo by zero gives 0 instead
// of trapping. Float16/BFloat16 compute in float and round once. Float Add/Sub/Mul/Div run
// linalg's vector arithmetic on every broadcast run.
#include <cmath>
#include <type_traits>
#include <vector>

#include "base/type_traits.h"
#include "linalg/vector_math.h"
#include "providers/cpu/kernels/math/elementwise.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

using elementwise::BinaryLoop;
using elementwise::BinaryShapes;
using elementwise::LegacyBroadcast;
using elementwise::ResolveBinaryShapes;

enum class ArithOp { kAdd, kSub, kMul, kDiv };

template <ArithOp op, typename C>
inline C ApplyArith(C a, C b) {
  if constexpr (op == ArithOp::kAdd) return elementwise::WrapAdd(a, b);
  if constexpr (op == ArithOp::kSub) return elementwise::WrapSub(a, b);
  if constexpr (op == ArithOp::kMul) return elementwise::WrapMul(a, b);
  if constexpr (op == ArithOp::kDiv) {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) return C(0);
      // MIN / -1 overflows (and traps on x86): numpy wraps it to MIN.
      if constexpr (std::is_signed_v<C>)
        if (b == C(-1)) return elementwise::WrapNeg(a);
      return static_cast<C>(a / b);
    } else {
      return a / b;
    }
  }
}

template <ArithOp op>
class Arithmetic final : public OpKernel {
 public:
  explicit Arithmetic(const KernelInfo& info) : legacy_(LegacyBroadcast::FromInfo(info)) {}
  // Either operand that has the output's shape (the runtime checks that): out[k] = a[k] op b[k].
  uint32_t InPlaceInputsFor(size_t output) const override { return output == 0 ? 3u : 0u; }

  void Compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    if (a.dtype() != b.dtype()) ctx.Fail("inputs must have the same element type");
    const BinaryShapes s = ResolveBinaryShapes(ctx, a.shape(), b.shape(), legacy_);
    Tensor& out = ctx.AllocateOutput(0, a.dtype(), s.out);
    const double cost = op == ArithOp::kDiv ? 4.0 : 1.0;
    Dispatch(NumericTypes{}, a.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      if constexpr (std::is_same_v<T, float>) {
        elementwise::VecBinaryLoop(ctx.thread_pool(), s.out, a.data<float>(), s.a, b.data<float>(), s.b,
                                   out.data<float>(), kVecOp);
      } else {
        BinaryLoop(ctx.thread_pool(), s.out, a.data<T>(), s.a, b.data<T>(), s.b, out.data<T>(), cost,
                   [](T x, T y) { return FromCompute<T>(ApplyArith<op, C>(ToCompute(x), ToCompute(y))); });
      }
    });
  }

 private:
  static constexpr linalg::BinaryOp kVecOp = op == ArithOp::kAdd   ? linalg::BinaryOp::kAdd
                                             : op == ArithOp::kSub ? linalg::BinaryOp::kSub
                                             : op == ArithOp::kMul ? linalg::BinaryOp::kMul
                                                                   : linalg::BinaryOp::kDiv;
  LegacyBroadcast legacy_;
};

ONYX_CPU_KERNEL("Add", 1, 6, Arithmetic<ArithOp::kAdd>);
ONYX_CPU_KERNEL("Add", 7, kOpsetMax, Arithmetic<ArithOp::kAdd>);
ONYX_CPU_KERNEL("Sub", 1, 6, Arithmetic<ArithOp::kSub>);
ONYX_CPU_KERNEL("Sub", 7, kOpsetMax, Arithmetic<ArithOp::kSub>);
ONYX_CPU_KERNEL("Mul", 1, 6, Arithmetic<ArithOp::kMul>);
ONYX_CPU_KERNEL("Mul", 7, kOpsetMax, Arithmetic<ArithOp::kMul>);
ONYX_CPU_KERNEL("Div", 1, 6, Arithmetic<ArithOp::kDiv>);
ONYX_CPU_KERNEL("Div", 7, kOpsetMax, Arithmetic<ArithOp::kDiv>);

// Pow: integer base with integer exponent is exact (wrapping); a negative exponent gives the
// truncated result (1 / base^n is 0 unless |base| is 1). Integer base with a float exponent
// computes in double and converts back, saturating. Float bases compute in float or double.
template <typename T>
T IntegerPow(T base, int64_t exponent) {
  if (exponent < 0) {
    if (base == T(1)) return T(1);
    if (base == T(-1)) return (exponent & 1) ? T(-1) : T(1);
    return T(0);
  }
  T result = T(1);
  while (exponent != 0) {
    if (exponent & 1) result = elementwise::WrapMul(result, base);
    exponent >>= 1;
    if (exponent != 0) base = elementwise::WrapMul(base, base);
  }
  return result;
}

// The exponent tensor as E values: a pointer into the tensor when it already holds E, else a
// converted copy in `storage`.
template <typename E>
const E* ExponentAs(const Tensor& y, std::vector<E>& storage, const ir::Node& what) {
  if (y.dtype() == DataTypeOf<E>()) return y.data<E>();
  storage.resize(static_cast<size_t>(y.size()));
  Dispatch(NumericTypes{}, y.dtype(), what, [&](auto tag) {
    using Y = typename decltype(tag)::type;
    const Y* p = y.data<Y>();
    for (int64_t i = 0; i < y.size(); ++i) {
      if constexpr (std::is_integral_v<E> && !std::is_integral_v<Y>)
        storage[static_cast<size_t>(i)] = elementwise::SaturatingCast<E>(static_cast<double>(ToCompute(p[i])));
      else if constexpr (std::is_same_v<Y, uint64_t> && std::is_same_v<E, int64_t>)
        storage[static_cast<size_t>(i)] = p[i] > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(p[i]);
      else
        storage[static_cast<size_t>(i)] = static_cast<E>(ToCompute(p[i]));
    }
  });
  return storage.data();
}

using PowBaseTypes = TypeList<float, double, Float16, BFloat16, int32_t, int64_t>;

class Pow final : public OpKernel {
 public:
  explicit Pow(const KernelInfo& info) : legacy_(LegacyBroadcast::FromInfo(info)), same_types_(info.opset() < 12) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& y = ctx.required_input(1);
    if (same_types_ && x.dtype() != y.dtype())
      ctx.Fail("before opset 12 the base and the exponent must have the same element type");
    if (!IsFloatingPoint(y.dtype()) && !IsSignedInteger(y.dtype()) && !IsUnsignedInteger(y.dtype()))
      ctx.Fail(StrCat("exponent element type ", DataTypeName(y.dtype()), " is not supported"));
    const BinaryShapes s = ResolveBinaryShapes(ctx, x.shape(), y.shape(), legacy_);
    Tensor& out = ctx.AllocateOutput(0, x.dtype(), s.out);
    ThreadPool* pool = ctx.thread_pool();
    const ir::Node& what = ctx.node();
    Dispatch(PowBaseTypes{}, x.dtype(), what, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_integral_v<T>) {
        if (IsFloatingPoint(y.dtype())) {
          std::vector<double> storage;
          const double* py = ExponentAs<double>(y, storage, what);
          BinaryLoop(pool, s.out, x.data<T>(), s.a, py, s.b, out.data<T>(), elementwise::kTranscendentalCost,
                     [](T b, double e) { return elementwise::SaturatingCast<T>(std::pow(static_cast<double>(b), e)); });
        } else {
          std::vector<int64_t> storage;
          const int64_t* py = ExponentAs<int64_t>(y, storage, what);
          BinaryLoop(pool, s.out, x.data<T>(), s.a, py, s.b, out.data<T>(), 8.0,
                     [](T b, int64_t e) { return IntegerPow<T>(b, e); });
        }
      } else {
        using C = ComputeType<T>;
        std::vector<C> storage;
        const C* py = ExponentAs<C>(y, storage, what);
        if constexpr (std::is_same_v<T, float>) {
          // A scalar exponent of 2 or 3 (variances, GELU's tanh form): products, not pow.
          if (y.size() == 1 && (py[0] == 2.0f || py[0] == 3.0f)) {
            const float* px = x.data<float>();
            float* po = out.data<float>();
            const bool cube = py[0] == 3.0f;
            ThreadPool::For(pool, out.size(), elementwise::kVecCheapCost, [&](int64_t begin, int64_t end) {
              if (cube)
                for (int64_t i = begin; i < end; ++i) po[i] = px[i] * px[i] * px[i];
              else
                for (int64_t i = begin; i < end; ++i) po[i] = px[i] * px[i];
            });
            return;
          }
        }
        BinaryLoop(pool, s.out, x.data<T>(), s.a, py, s.b, out.data<T>(), elementwise::kTranscendentalCost,
                   [](T b, C e) {
                     const C v = ToCompute(b);
                     return FromCompute<T>(e == C(2) ? v * v : std::pow(v, e));  // x*x is exact, and common
                   });
      }
    });
  }

 private:
  LegacyBroadcast legacy_;
  bool same_types_;
};

ONYX_CPU_KERNEL("Pow", 1, 6, Pow);
ONYX_CPU_KERNEL("Pow", 7, 11, Pow);
ONYX_CPU_KERNEL("Pow", 12, kOpsetMax, Pow);

// Mod: fmod = 0 follows Python's % (the result takes the divisor's sign); fmod = 1 follows C's
// fmod (the dividend's sign). Integer modulo by zero gives 0.
template <typename C>
inline C FloorMod(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    if (b == 0) return C(0);
    if constexpr (std::is_signed_v<C>) {
      if (b == C(-1)) return C(0);  // MIN % -1 traps on x86
      C r = static_cast<C>(a % b);
      if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<C>(r + b);
      return r;
    } else {
      return static_cast<C>(a % b);
    }
  } else {
    C r = std::fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    else if (r == 0) r = std::copysign(C(0), b);
    return r;
  }
}

template <typename C>
inline C TruncMod(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    if (b == 0) return C(0);
    if constexpr (std::is_signed_v<C>)
      if (b == C(-1)) return C(0);
    return static_cast<C>(a % b);
  } else {
    return std::fmod(a, b);
  }
}

class Mod final : public OpKernel {
 public:
  explicit Mod(const KernelInfo& info) : fmod_(info.GetIntOr("fmod", 0)) {
    if (fmod_ != 0 && fmod_ != 1) info.Fail(StrCat("attribute 'fmod' must be 0 or 1, got ", fmod_));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    if (a.dtype() != b.dtype()) ctx.Fail("inputs must have the same element type");
    const BinaryShapes s = ResolveBinaryShapes(ctx, a.shape(), b.shape(), LegacyBroadcast{});
    Tensor& out = ctx.AllocateOutput(0, a.dtype(), s.out);
    Dispatch(NumericTypes{}, a.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      if (fmod_ == 1) {
        BinaryLoop(ctx.thread_pool(), s.out, a.data<T>(), s.a, b.data<T>(), s.b, out.data<T>(), 8.0,
                   [](T x, T y) { return FromCompute<T>(TruncMod<C>(ToCompute(x), ToCompute(y))); });
      } else {
        // Floats with fmod = 0 are outside the spec; numpy's mod is the natural meaning.
        BinaryLoop(ctx.thread_pool(), s.out, a.data<T>(), s.a, b.data<T>(), s.b, out.data<T>(), 8.0,
                   [](T x, T y) { return FromCompute<T>(FloorMod<C>(ToCompute(x), ToCompute(y))); });
      }
    });
  }

 private:
  int64_t fmod_;
};

ONYX_CPU_KERNEL("Mod", 10, kOpsetMax, Mod);

}  // namespace
}  // namespace onyx
