// CausalConvWithState (opset 27): causal depthwise 1-D convolution with a carried state.
// For each (b, c): seq = concat(past_state[b, c] (zeros when absent), input[b, c]),
//   output[b, c, t] = act(bias[c] + sum_k weight[c, 0, k] seq[t + k]),
//   present_state[b, c] = the last k - 1 values of seq.
// act is none, or silu / swish (x * sigmoid(x)). float16/bfloat16 compute in float.
#include <cmath>
#include <vector>

#include "base/type_traits.h"
#include "platform/thread_pool.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

class CausalConvWithState final : public OpKernel {
 public:
  explicit CausalConvWithState(const KernelInfo& info) {
    const std::string act = info.GetStringOr("activation", "none");
    if (act == "silu" || act == "swish")
      silu_ = true;
    else if (act != "none")
      info.Fail(StrCat("activation must be 'none', 'silu' or 'swish', got '", act, "'"));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& w = ctx.required_input(1);
    const Tensor* bias = ctx.input(2);
    const Tensor* past = ctx.input(3);
    if (x.rank() != 3) ctx.Fail(StrCat("input must be [batch, channels, length], got ", x.Describe()));
    const int64_t batch = x.dim(0), ch = x.dim(1), len = x.dim(2);
    if (w.rank() != 3 || w.dim(0) != ch || w.dim(1) != 1 || w.dim(2) < 1)
      ctx.Fail(StrCat("weight must be [", ch, ", 1, k] with k >= 1, got ", w.Describe()));
    const int64_t kernel = w.dim(2), keep = kernel - 1;
    if (w.dtype() != x.dtype()) ctx.Fail("weight must have the input's element type");
    if (bias != nullptr && (bias->dtype() != x.dtype() || bias->shape() != Shape{ch}))
      ctx.Fail(StrCat("bias must be [", ch, "] of the input's type"));
    if (past != nullptr && (past->dtype() != x.dtype() || past->shape() != Shape{batch, ch, keep}))
      ctx.Fail(StrCat("past_state must be [", batch, ", ", ch, ", ", keep, "] of the input's type"));
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.shape());
    Tensor& state_out = ctx.AllocateOutput(1, x.dtype(), {batch, ch, keep});
    Dispatch(FloatTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      const T* xp = x.data<T>();
      const T* wp = w.data<T>();
      T* yp = y.data<T>();
      T* sp = state_out.data<T>();
      ThreadPool::For(ctx.thread_pool(), batch * ch, static_cast<double>((len + keep) * kernel * 2),
                      [&](int64_t begin, int64_t end) {
                        std::vector<C> seq(static_cast<size_t>(keep + len));
                        std::vector<T> raw(static_cast<size_t>(keep + len));
                        for (int64_t bc = begin; bc < end; ++bc) {
                          const int64_t c = bc % ch;
                          // The raw values keep present_state bit-exact; seq holds them in the compute type.
                          for (int64_t i = 0; i < keep; ++i)
                            raw[i] = past ? past->data<T>()[bc * keep + i] : FromCompute<T>(C(0));
                          for (int64_t i = 0; i < len; ++i) raw[keep + i] = xp[bc * len + i];
                          for (int64_t i = 0; i < keep + len; ++i) seq[i] = ToCompute(raw[i]);
                          const C b0 = bias ? ToCompute(bias->data<T>()[c]) : C(0);
                          for (int64_t t = 0; t < len; ++t) {
                            C acc = b0;
                            for (int64_t j = 0; j < kernel; ++j) acc += ToCompute(wp[c * kernel + j]) * seq[t + j];
                            if (silu_) acc = acc / (C(1) + std::exp(-acc));
                            yp[bc * len + t] = FromCompute<T>(acc);
                          }
                          for (int64_t i = 0; i < keep; ++i) sp[bc * keep + i] = raw[len + i];
                        }
                      });
    });
  }

 private:
  bool silu_ = false;
};

ONYX_CPU_KERNEL("CausalConvWithState", 27, kOpsetMax, CausalConvWithState);

}  // namespace
}  // namespace onyx
