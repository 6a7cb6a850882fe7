// ReverseSequence: reverses the first sequence_lens[b] steps of each batch entry along the time
// axis; later steps are copied unchanged. Each (time, batch) block is one memcpy.
#include "platform/thread_pool.h"
#include "providers/cpu/kernels/tensor/tensor_util.h"

namespace onyx {
namespace tensor_kernels {
namespace {

class ReverseSequence final : public OpKernel {
 public:
  explicit ReverseSequence(const KernelInfo& info)
      : time_axis_(info.GetIntOr("time_axis", 0)), batch_axis_(info.GetIntOr("batch_axis", 1)) {
    if ((time_axis_ != 0 && time_axis_ != 1) || (batch_axis_ != 0 && batch_axis_ != 1) || time_axis_ == batch_axis_)
      info.Fail(StrCat("time_axis ", time_axis_, " and batch_axis ", batch_axis_, " must be 0 and 1 in some order"));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    if (x.rank() < 2) ctx.Fail("input must have rank 2 or more");
    const std::vector<int64_t> lens = ReadInts(ctx, ctx.required_input(1), "sequence_lens");
    const auto t_axis = static_cast<size_t>(time_axis_), b_axis = static_cast<size_t>(batch_axis_);
    const int64_t max_time = x.dim(t_axis), batch = x.dim(b_axis);
    if (static_cast<int64_t>(lens.size()) != batch)
      ctx.Fail(StrCat("sequence_lens has ", lens.size(), " entries for batch size ", batch));
    for (int64_t len : lens)
      if (len < 0 || len > max_time) ctx.Fail(StrCat("sequence length ", len, " is outside [0, ", max_time, "]"));
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.shape());
    if (y.size() == 0) return;
    const auto strides = Strides(x.shape());
    const int64_t inner = strides[1];
    DispatchBySize(ctx, x.dtype(), [&](auto tag) {
      using U = typename decltype(tag)::type;
      const U* in = x.data<U>();
      U* out = y.data<U>();
      ThreadPool::For(ctx.thread_pool(), batch * max_time, 4.0 + static_cast<double>(inner) / 4.0,
                      [&](int64_t begin, int64_t end) {
                        for (int64_t k = begin; k < end; ++k) {
                          const int64_t b = k / max_time, t = k % max_time;
                          const int64_t len = lens[static_cast<size_t>(b)];
                          const int64_t src_t = t < len ? len - 1 - t : t;
                          const int64_t dst = t * strides[t_axis] + b * strides[b_axis];
                          const int64_t src = src_t * strides[t_axis] + b * strides[b_axis];
                          CopyN(out + dst, in + src, inner);
                        }
                      });
    });
  }

 private:
  int64_t time_axis_;
  int64_t batch_axis_;
};

ONYX_CPU_KERNEL("ReverseSequence", 10, kOpsetMax, ReverseSequence);

}  // namespace
}  // namespace tensor_kernels
}  // namespace onyx
