// com.microsoft.RotaryEmbedding (RoPE): input (B, S, N * H) or (B, N, S, H); position_ids (1)
// (positions start + s) or (B, S); cos_cache/sin_cache (max_positions, rotary_dim / 2). The
// first rotary_dim values of every head are rotated (interleaved pairs (2i, 2i+1), otherwise
// halves (i, i + rotary_dim / 2)); the rest are copied. rotary_embedding_dim defaults to
// 2 * cos_cache dim 1 (the whole head) and then needs num_heads. Positions outside the caches
// fail the node. float16/bfloat16 compute in float.
#include <algorithm>
#include <vector>

#include "platform/thread_pool.h"
#include "providers/cpu/kernels/contrib/attention_core.h"
#include "providers/kernel.h"

namespace onyx::contrib {
namespace {

class RotaryEmbedding final : public OpKernel {
 public:
  explicit RotaryEmbedding(const KernelInfo& info)
      : interleaved_(info.GetIntOr("interleaved", 0) != 0),
        num_heads_(info.GetIntOr("num_heads", 0)),
        rotary_dim_(info.GetIntOr("rotary_embedding_dim", 0)) {
    if (rotary_dim_ > 0 && num_heads_ <= 0)
      info.Fail("attribute 'num_heads' must be given with 'rotary_embedding_dim'");
    if (rotary_dim_ < 0 || num_heads_ < 0 || rotary_dim_ % 2 != 0)
      info.Fail("attributes 'num_heads' and 'rotary_embedding_dim' must be >= 0 (the latter even)");
    if (info.GetIntOr("is_packed_batching", 0) != 0) info.Fail("is_packed_batching = 1 is not supported");
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& pos = ctx.required_input(1);
    const Tensor& cos = ctx.required_input(2);
    const Tensor& sin = ctx.required_input(3);
    if (x.rank() != 3 && x.rank() != 4) ctx.Fail("input must be 3-D (B, S, hidden) or 4-D (B, N, S, H)");
    if (cos.rank() != 2 || cos.shape() != sin.shape()) ctx.Fail("cos_cache and sin_cache must be 2-D of one shape");
    if (cos.dtype() != x.dtype() || sin.dtype() != x.dtype()) ctx.Fail("caches must have the input's element type");
    if (pos.dtype() != DataType::kInt64) ctx.Fail("position_ids must be int64");
    const bool bnsh = x.rank() == 4;
    const int64_t B = x.dim(0), S = bnsh ? x.dim(2) : x.dim(1);
    const int64_t half_cache = cos.dim(1), max_pos = cos.dim(0);
    int64_t N, H;
    if (bnsh) {
      N = x.dim(1);
      H = x.dim(3);
    } else {
      H = rotary_dim_ > 0 ? x.dim(2) / num_heads_ : 2 * half_cache;
      N = num_heads_ > 0 ? num_heads_ : (H ? x.dim(2) / H : 0);
      if (H == 0 || N * H != x.dim(2))
        ctx.Fail(StrCat("hidden size ", x.dim(2), " is not num_heads x head_size (", N, " x ", H, ")"));
    }
    const int64_t R = rotary_dim_ > 0 ? rotary_dim_ : 2 * half_cache;
    if (R > H) ctx.Fail(StrCat("rotary dimension ", R, " exceeds head size ", H));
    if (R / 2 > half_cache) ctx.Fail(StrCat("cos_cache dim 1 (", half_cache, ") is less than rotary_dim / 2"));
    const bool scalar_pos = pos.size() == 1 && pos.rank() <= 1;
    if (!scalar_pos && !(pos.rank() == 2 && pos.dim(0) == B && pos.dim(1) == S))
      ctx.Fail(StrCat("position_ids must be (1) or (", B, ", ", S, ")"));
    const int64_t* p = pos.data<int64_t>();
    for (int64_t i = 0; i < (scalar_pos ? 1 : pos.size()); ++i) {
      const int64_t last = scalar_pos ? p[0] + S - 1 : p[i];
      if (p[i] < 0 || last >= max_pos)
        ctx.Fail(StrCat("position ", p[i] < 0 ? p[i] : last, " is outside the caches' ", max_pos, " positions"));
    }
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.shape());
    if (x.size() == 0) return;
    // Strides of (b, s, n) rows.
    const int64_t seq_stride = bnsh ? H : N * H, head_stride = bnsh ? S * H : H, batch_stride = S * N * H;
    const bool wide = x.dtype() != DataType::kFloat;
    std::vector<float> xf, cf, sf, yf;
    if (wide) {
      xf = ToFloatVector(x);
      cf = ToFloatVector(cos);
      sf = ToFloatVector(sin);
      yf.resize(static_cast<size_t>(x.size()));
    } else if (x.dtype() != DataType::kFloat) {
      ctx.Fail(StrCat("element type ", DataTypeName(x.dtype()), " is not supported"));
    }
    const float* xd = wide ? xf.data() : x.data<float>();
    const float* cd = wide ? cf.data() : cos.data<float>();
    const float* sd = wide ? sf.data() : sin.data<float>();
    float* yd = wide ? yf.data() : y.data<float>();
    ThreadPool::For(ctx.thread_pool(), B * S, 4.0 * N * H, [&](int64_t begin, int64_t end) {
      for (int64_t bs = begin; bs < end; ++bs) {
        const int64_t b = bs / S, s = bs % S;
        const int64_t position = scalar_pos ? p[0] + s : p[bs];
        const float* c = cd + position * half_cache;
        const float* sn = sd + position * half_cache;
        for (int64_t n = 0; n < N; ++n) {
          const int64_t off = b * batch_stride + s * seq_stride + n * head_stride;
          RotateRow(xd + off, yd + off, c, sn, R, interleaved_);
          std::copy(xd + off + R, xd + off + H, yd + off + R);
        }
      }
    });
    if (wide) FromFloat(yf.data(), y);
  }

 private:
  bool interleaved_;
  int64_t num_heads_;
  int64_t rotary_dim_;
};

ONYX_REGISTER_KERNEL("CPU", "com.microsoft", "RotaryEmbedding", 1, kOpsetMax, RotaryEmbedding);

}  // namespace
}  // namespace onyx::contrib
