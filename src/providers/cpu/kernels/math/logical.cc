// Comparisons (Equal Greater GreaterOrEqual Less LessOrEqual) and boolean logic (And Or Xor
// Not). Opsets 1-6 of Equal/Greater/Less/And/Or/Xor use the legacy `broadcast`/`axis`
// attributes; later opsets use numpy broadcasting. Equal compares strings from opset 19.
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

enum class CmpOp { kEqual, kGreater, kGreaterOrEqual, kLess, kLessOrEqual };

template <CmpOp op, typename C>
inline bool ApplyCmp(const C& a, const C& b) {
  if constexpr (op == CmpOp::kEqual) return a == b;
  if constexpr (op == CmpOp::kGreater) return a > b;
  if constexpr (op == CmpOp::kGreaterOrEqual) return a >= b;
  if constexpr (op == CmpOp::kLess) return a < b;
  if constexpr (op == CmpOp::kLessOrEqual) return a <= b;
}

using ComparableTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                                 uint16_t, uint32_t, uint64_t, bool>;

template <CmpOp op>
class Compare final : public OpKernel {
 public:
  explicit Compare(const KernelInfo& info)
      : legacy_(LegacyBroadcast::FromInfo(info)), strings_(op == CmpOp::kEqual && info.opset() >= 19) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    if (a.dtype() != b.dtype()) ctx.Fail("inputs must have the same element type");
    const BinaryShapes s = ResolveBinaryShapes(ctx, a.shape(), b.shape(), legacy_);
    Tensor& out = ctx.AllocateOutput(0, DataType::kBool, s.out);
    ThreadPool* pool = ctx.thread_pool();
    if (a.dtype() == DataType::kString) {
      if (!strings_) ctx.Fail("string inputs are supported by Equal from opset 19");
      BinaryLoop(pool, s.out, a.data<std::string>(), s.a, b.data<std::string>(), s.b, out.data<bool>(), 8.0,
                 [](const std::string& x, const std::string& y) { return x == y; });
      return;
    }
    Dispatch(ComparableTypes{}, a.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      BinaryLoop(pool, s.out, a.data<T>(), s.a, b.data<T>(), s.b, out.data<bool>(), elementwise::kCheapCost,
                 [](T x, T y) { return ApplyCmp<op>(ToCompute(x), ToCompute(y)); });
    });
  }

 private:
  LegacyBroadcast legacy_;
  bool strings_;
};

ONYX_CPU_KERNEL("Equal", 1, 6, Compare<CmpOp::kEqual>);
ONYX_CPU_KERNEL("Equal", 7, 18, Compare<CmpOp::kEqual>);
ONYX_CPU_KERNEL("Equal", 19, kOpsetMax, Compare<CmpOp::kEqual>);
ONYX_CPU_KERNEL("Greater", 1, 6, Compare<CmpOp::kGreater>);
ONYX_CPU_KERNEL("Greater", 7, kOpsetMax, Compare<CmpOp::kGreater>);
ONYX_CPU_KERNEL("Less", 1, 6, Compare<CmpOp::kLess>);
ONYX_CPU_KERNEL("Less", 7, kOpsetMax, Compare<CmpOp::kLess>);
ONYX_CPU_KERNEL("GreaterOrEqual", 12, kOpsetMax, Compare<CmpOp::kGreaterOrEqual>);
ONYX_CPU_KERNEL("LessOrEqual", 12, kOpsetMax, Compare<CmpOp::kLessOrEqual>);

enum class LogicOp { kAnd, kOr, kXor };

template <LogicOp op>
class Logic final : public OpKernel {
 public:
  explicit Logic(const KernelInfo& info) : legacy_(LegacyBroadcast::FromInfo(info)) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    if (a.dtype() != DataType::kBool || b.dtype() != DataType::kBool) ctx.Fail("inputs must be bool tensors");
    const BinaryShapes s = ResolveBinaryShapes(ctx, a.shape(), b.shape(), legacy_);
    Tensor& out = ctx.AllocateOutput(0, DataType::kBool, s.out);
    BinaryLoop(ctx.thread_pool(), s.out, a.data<bool>(), s.a, b.data<bool>(), s.b, out.data<bool>(),
               elementwise::kCheapCost, [](bool x, bool y) {
                 if constexpr (op == LogicOp::kAnd) return x && y;
                 if constexpr (op == LogicOp::kOr) return x || y;
                 if constexpr (op == LogicOp::kXor) return x != y;
               });
  }

 private:
  LegacyBroadcast legacy_;
};

ONYX_CPU_KERNEL("And", 1, 6, Logic<LogicOp::kAnd>);
ONYX_CPU_KERNEL("And", 7, kOpsetMax, Logic<LogicOp::kAnd>);
ONYX_CPU_KERNEL("Or", 1, 6, Logic<LogicOp::kOr>);
ONYX_CPU_KERNEL("Or", 7, kOpsetMax, Logic<LogicOp::kOr>);
ONYX_CPU_KERNEL("Xor", 1, 6, Logic<LogicOp::kXor>);
ONYX_CPU_KERNEL("Xor", 7, kOpsetMax, Logic<LogicOp::kXor>);

class Not final : public OpKernel {
 public:
  explicit Not(const KernelInfo&) {}
  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    if (x.dtype() != DataType::kBool) ctx.Fail("input must be a bool tensor");
    Tensor& y = ctx.AllocateOutput(0, DataType::kBool, x.shape());
    elementwise::Map(ctx.thread_pool(), x.data<bool>(), y.data<bool>(), x.size(), elementwise::kCheapCost,
                     [](bool v) { return !v; });
  }
};

ONYX_CPU_KERNEL("Not", 1, kOpsetMax, Not);

}  // namespace
}  // namespace onyx
