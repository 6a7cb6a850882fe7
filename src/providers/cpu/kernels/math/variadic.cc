// Variadic Max, Min, Sum and Mean. Before opset 8 every input has the same shape; from opset 8
// the inputs broadcast (numpy). Max/Min propagate NaN like numpy.maximum/minimum. Float16 and
// BFloat16 accumulate in float and round once at the end; float folds run linalg's vector
// arithmetic.
#include <cmath>
#include <type_traits>
#include <vector>

#include "base/type_traits.h"
#include "linalg/vector_math.h"
#include "providers/cpu/kernels/math/elementwise.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

enum class FoldOp { kMax, kMin, kSum, kMean };

template <FoldOp op, typename C>
inline C Fold(C acc, C v) {
  if constexpr (op == FoldOp::kMax) {
    if constexpr (std::is_floating_point_v<C>) return (acc != acc || acc > v) ? acc : v;
    else return acc > v ? acc : v;
  } else if constexpr (op == FoldOp::kMin) {
    if constexpr (std::is_floating_point_v<C>) return (acc != acc || acc < v) ? acc : v;
    else return acc < v ? acc : v;
  } else {
    return elementwise::WrapAdd(acc, v);
  }
}

template <FoldOp op>
class Variadic final : public OpKernel {
 public:
  explicit Variadic(const KernelInfo& info) : broadcast_(info.opset() >= 8) {}

  void Compute(KernelContext& ctx) const override {
    const size_t n = ctx.num_inputs();
    if (n == 0) ctx.Fail("needs at least one input");
    std::vector<const Tensor*> inputs;
    std::vector<Shape> shapes;
    for (size_t i = 0; i < n; ++i) {
      inputs.push_back(&ctx.required_input(i));
      shapes.push_back(inputs.back()->shape());
      if (inputs.back()->dtype() != inputs[0]->dtype()) ctx.Fail("inputs must have the same element type");
    }
    Shape out_shape = shapes[0];
    if (broadcast_) {
      try {
        out_shape = BroadcastShapes(shapes);
      } catch (const Error& e) {
        ctx.Fail(e.what());
      }
    } else {
      for (const Shape& s : shapes)
        if (s != out_shape) ctx.Fail("before opset 8 every input must have the same shape");
    }
    Tensor& out = ctx.AllocateOutput(0, inputs[0]->dtype(), out_shape);
    const DataType dt = inputs[0]->dtype();
    auto run = [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      ThreadPool* pool = ctx.thread_pool();
      const int64_t size = out.size();
      // Accumulate in C: in the output itself when C is T, else in a float buffer.
      std::vector<C> buffer;
      C* acc = nullptr;
      if constexpr (std::is_same_v<C, T>) {
        acc = out.data<T>();
      } else {
        buffer.resize(static_cast<size_t>(size));
        acc = buffer.data();
      }
      // acc = broadcast(input 0).
      elementwise::BinaryLoop(pool, out_shape, inputs[0]->data<T>(), shapes[0], inputs[0]->data<T>(), shapes[0], acc,
                              elementwise::kCheapCost, [](T v, T) { return ToCompute(v); });
      for (size_t i = 1; i < n; ++i) {
        if constexpr (std::is_same_v<T, float>) {
          elementwise::VecBinaryLoop(pool, out_shape, acc, out_shape, inputs[i]->data<float>(), shapes[i], acc,
                                     kVecOp);
        } else {
          elementwise::BinaryLoop(pool, out_shape, static_cast<const C*>(acc), out_shape, inputs[i]->data<T>(),
                                  shapes[i], acc, elementwise::kCheapCost,
                                  [](C a, T v) { return Fold<op, C>(a, ToCompute(v)); });
        }
      }
      if constexpr (op == FoldOp::kMean) {
        const C count = static_cast<C>(n);
        if constexpr (std::is_same_v<T, float>)
          linalg::VecBinaryScalar(linalg::BinaryOp::kDiv, acc, count, acc, static_cast<size_t>(size));
        else
          for (int64_t i = 0; i < size; ++i) acc[i] = acc[i] / count;
      }
      if constexpr (!std::is_same_v<C, T>) {
        T* po = out.data<T>();
        elementwise::Map(pool, acc, po, size, elementwise::kCheapCost, [](C v) { return FromCompute<T>(v); });
      }
    };
    if constexpr (op == FoldOp::kMean) Dispatch(FloatTypes{}, dt, ctx.node(), run);
    else Dispatch(NumericTypes{}, dt, ctx.node(), run);
  }

 private:
  // numpy.maximum / minimum semantics (NaN wins; of two zeros the second) match Fold's.
  static constexpr linalg::BinaryOp kVecOp = op == FoldOp::kMax   ? linalg::BinaryOp::kMax
                                             : op == FoldOp::kMin ? linalg::BinaryOp::kMin
                                                                  : linalg::BinaryOp::kAdd;
  bool broadcast_;
};

ONYX_CPU_KERNEL("Max", 1, 7, Variadic<FoldOp::kMax>);
ONYX_CPU_KERNEL("Max", 8, kOpsetMax, Variadic<FoldOp::kMax>);
ONYX_CPU_KERNEL("Min", 1, 7, Variadic<FoldOp::kMin>);
ONYX_CPU_KERNEL("Min", 8, kOpsetMax, Variadic<FoldOp::kMin>);
ONYX_CPU_KERNEL("Sum", 1, 7, Variadic<FoldOp::kSum>);
ONYX_CPU_KERNEL("Sum", 8, kOpsetMax, Variadic<FoldOp::kSum>);
ONYX_CPU_KERNEL("Mean", 1, 7, Variadic<FoldOp::kMean>);
ONYX_CPU_KERNEL("Mean", 8, kOpsetMax, Variadic<FoldOp::kMean>);

}  // namespace
}  // namespace onyx
