// BitShift (opset 11, unsigned integers, `direction` LEFT or RIGHT) and BitwiseAnd / BitwiseOr /
// BitwiseXor / BitwiseNot (opset 18, every integer type), with numpy broadcasting.
#include <string>

#include "base/type_traits.h"
#include "providers/cpu/kernels/math/elementwise.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

using elementwise::BinaryLoop;
using elementwise::BinaryShapes;
using elementwise::LegacyBroadcast;
using elementwise::ResolveBinaryShapes;

using UnsignedTypes = TypeList<uint8_t, uint16_t, uint32_t, uint64_t>;

class BitShift final : public OpKernel {
 public:
  explicit BitShift(const KernelInfo& info) {
    const std::string direction = info.GetString("direction");
    if (direction != "LEFT" && direction != "RIGHT")
      info.Fail(StrCat("attribute 'direction' must be \"LEFT\" or \"RIGHT\", got \"", direction, "\""));
    left_ = direction == "LEFT";
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& y = ctx.required_input(1);
    if (x.dtype() != y.dtype()) ctx.Fail("inputs must have the same element type");
    const BinaryShapes s = ResolveBinaryShapes(ctx, x.shape(), y.shape(), LegacyBroadcast{});
    Tensor& out = ctx.AllocateOutput(0, x.dtype(), s.out);
    Dispatch(UnsignedTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      constexpr T kBits = static_cast<T>(sizeof(T) * 8);
      // Shifting by the width or more is undefined in C++; numpy gives 0.
      if (left_) {
        BinaryLoop(ctx.thread_pool(), s.out, x.data<T>(), s.a, y.data<T>(), s.b, out.data<T>(),
                   elementwise::kCheapCost, [](T v, T n) { return n >= kBits ? T(0) : static_cast<T>(v << n); });
      } else {
        BinaryLoop(ctx.thread_pool(), s.out, x.data<T>(), s.a, y.data<T>(), s.b, out.data<T>(),
                   elementwise::kCheapCost, [](T v, T n) { return n >= kBits ? T(0) : static_cast<T>(v >> n); });
      }
    });
  }

 private:
  bool left_ = true;
};

ONYX_CPU_KERNEL("BitShift", 11, kOpsetMax, BitShift);

enum class BitOp { kAnd, kOr, kXor };

template <BitOp op>
class Bitwise final : public OpKernel {
 public:
  explicit Bitwise(const KernelInfo&) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    if (a.dtype() != b.dtype()) ctx.Fail("inputs must have the same element type");
    const BinaryShapes s = ResolveBinaryShapes(ctx, a.shape(), b.shape(), LegacyBroadcast{});
    Tensor& out = ctx.AllocateOutput(0, a.dtype(), s.out);
    Dispatch(IntegerTypes{}, a.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      BinaryLoop(ctx.thread_pool(), s.out, a.data<T>(), s.a, b.data<T>(), s.b, out.data<T>(), elementwise::kCheapCost,
                 [](T x, T y) {
                   if constexpr (op == BitOp::kAnd) return static_cast<T>(x & y);
                   if constexpr (op == BitOp::kOr) return static_cast<T>(x | y);
                   if constexpr (op == BitOp::kXor) return static_cast<T>(x ^ y);
                 });
    });
  }
};

class BitwiseNot final : public OpKernel {
 public:
  explicit BitwiseNot(const KernelInfo&) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.shape());
    Dispatch(IntegerTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      elementwise::Map(ctx.thread_pool(), x.data<T>(), y.data<T>(), x.size(), elementwise::kCheapCost,
                       [](T v) { return static_cast<T>(~v); });
    });
  }
};

ONYX_CPU_KERNEL("BitwiseAnd", 18, kOpsetMax, Bitwise<BitOp::kAnd>);
ONYX_CPU_KERNEL("BitwiseOr", 18, kOpsetMax, Bitwise<BitOp::kOr>);
ONYX_CPU_KERNEL("BitwiseXor", 18, kOpsetMax, Bitwise<BitOp::kXor>);
ONYX_CPU_KERNEL("BitwiseNot", 18, kOpsetMax, BitwiseNot);

}  // namespace
}  // namespace onyx
