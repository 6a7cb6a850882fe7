// RotaryEmbedding (opset 23): rotates the first rotary_embedding_dim features of each head by
// position-dependent angles from cos/sin caches, either as two halves (x1 | x2) or as
// interleaved pairs (x0, x1), (x2, x3), ... Input is 4-D [B, H, S, D] or 3-D [B, S, H*D]
// (num_heads required). With position_ids [B, S] the caches are [max_pos, rd/2]; without,
// they are [B, S, rd/2].
#include <cstring>

#include "base/type_traits.h"
#include "platform/thread_pool.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

class RotaryEmbedding final : public OpKernel {
 public:
  explicit RotaryEmbedding(const KernelInfo& info)
      : interleaved_(info.GetIntOr("interleaved", 0) != 0),
        rotary_dim_(info.GetIntOr("rotary_embedding_dim", 0)),
        num_heads_(info.GetIntOr("num_heads", 0)) {
    if (rotary_dim_ < 0 || num_heads_ < 0) info.Fail("rotary_embedding_dim and num_heads must be non-negative");
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& cos_cache = ctx.required_input(1);
    const Tensor& sin_cache = ctx.required_input(2);
    const Tensor* pos = ctx.input(3);
    if (cos_cache.dtype() != x.dtype() || sin_cache.dtype() != x.dtype())
      ctx.Fail("cos_cache and sin_cache must have the input's element type");
    int64_t batch, heads, seq, head;
    if (x.rank() == 4) {
      batch = x.dim(0), heads = x.dim(1), seq = x.dim(2), head = x.dim(3);
    } else if (x.rank() == 3) {
      if (num_heads_ <= 0) ctx.Fail("a 3-D input needs the num_heads attribute");
      if (x.dim(2) % num_heads_) ctx.Fail(StrCat("hidden size ", x.dim(2), " is not a multiple of num_heads"));
      batch = x.dim(0), seq = x.dim(1), heads = num_heads_, head = x.dim(2) / num_heads_;
    } else {
      ctx.Fail(StrCat("input must be 3-D or 4-D, got ", x.Describe()));
    }
    const int64_t rd = rotary_dim_ == 0 ? head : rotary_dim_;
    if (rd > head || rd % 2) ctx.Fail(StrCat("rotary_embedding_dim ", rd, " must be even and at most ", head));
    const int64_t half = rd / 2;
    int64_t max_pos = 0;
    if (pos != nullptr) {
      if (pos->dtype() != DataType::kInt64 || pos->shape() != Shape{batch, seq})
        ctx.Fail(StrCat("position_ids must be int64 [", batch, ", ", seq, "], got ", pos->Describe()));
      if (cos_cache.rank() != 2 || cos_cache.dim(1) != half || sin_cache.shape() != cos_cache.shape())
        ctx.Fail(StrCat("with position_ids the caches must be [max_position, ", half, "]"));
      max_pos = cos_cache.dim(0);
      for (int64_t i = 0; i < batch * seq; ++i)
        if (pos->data<int64_t>()[i] < 0 || pos->data<int64_t>()[i] >= max_pos)
          ctx.Fail(StrCat("position id ", pos->data<int64_t>()[i], " is outside [0, ", max_pos, ")"));
    } else if (cos_cache.shape() != Shape{batch, seq, half} || sin_cache.shape() != cos_cache.shape()) {
      ctx.Fail(StrCat("without position_ids the caches must be [", batch, ", ", seq, ", ", half, "]"));
    }
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.shape());
    Dispatch(FloatTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      const T* cp = cos_cache.data<T>();
      const T* sp = sin_cache.data<T>();
      ThreadPool::For(
          ctx.thread_pool(), batch * seq, static_cast<double>(heads * head * 4), [&](int64_t begin, int64_t end) {
            for (int64_t bs = begin; bs < end; ++bs) {
              const int64_t b = bs / seq, s = bs % seq;
              const int64_t row = pos != nullptr ? pos->data<int64_t>()[bs] : bs;
              const T* cr = cp + row * half;
              const T* sr = sp + row * half;
              for (int64_t h = 0; h < heads; ++h) {
                const int64_t off = x.rank() == 4 ? ((b * heads + h) * seq + s) * head : (bs * heads + h) * head;
                const T* in = xp + off;
                T* out = yp + off;
                for (int64_t i = 0; i < half; ++i) {
                  const int64_t i1 = interleaved_ ? 2 * i : i;
                  const int64_t i2 = interleaved_ ? 2 * i + 1 : i + half;
                  const C c = ToCompute(cr[i]), sn = ToCompute(sr[i]);
                  const C x1 = ToCompute(in[i1]), x2 = ToCompute(in[i2]);
                  out[i1] = FromCompute<T>(c * x1 - sn * x2);
                  out[i2] = FromCompute<T>(sn * x1 + c * x2);
                }
                if (head > rd) std::memcpy(out + rd, in + rd, sizeof(T) * (head - rd));
              }
            }
          });
    });
  }

 private:
  bool interleaved_;
  int64_t rotary_dim_;
  int64_t num_heads_;
};

ONYX_CPU_KERNEL("RotaryEmbedding", 23, kOpsetMax, RotaryEmbedding);

}  // namespace
}  // namespace onyx
