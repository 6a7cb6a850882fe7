// Attention (opset 23; 24 adds nonpad_kv_seqlen): scaled dot-product attention over 3-D
// [B, L, H*D] or 4-D [B, H, L, D] inputs with grouped KV heads (GQA/MQA), bool or additive
// masks (padded with "masked" up to the total KV length), causal masking aligned to the cache
// (past_key length, or nonpad_kv_seqlen - q_len per batch), past/present KV, softcap and the
// four qk_matmul_output modes. Rows whose every key is masked produce zeros. float16/bfloat16
// compute in float (double with softmax_precision double); the products run on linalg::Sgemm.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "base/type_traits.h"
#include "platform/thread_pool.h"
#include "providers/cpu/kernels/attention/compute_gemm.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

// Softmax of one row in place; a row with no finite maximum (all -inf) becomes all zeros.
template <typename C>
void SoftmaxRow(C* row, int64_t n) {
  C mx = -std::numeric_limits<C>::infinity();
  bool nan = false;
  for (int64_t j = 0; j < n; ++j) {
    if (std::isnan(row[j])) nan = true;
    mx = std::max(mx, row[j]);
  }
  if (nan) {
    std::fill(row, row + n, std::numeric_limits<C>::quiet_NaN());
    return;
  }
  if (mx == -std::numeric_limits<C>::infinity()) {
    std::fill(row, row + n, C(0));
    return;
  }
  C sum = 0;
  for (int64_t j = 0; j < n; ++j) {
    row[j] = std::exp(row[j] - mx);
    sum += row[j];
  }
  const C inv = C(1) / sum;
  for (int64_t j = 0; j < n; ++j) row[j] *= inv;
}

class Attention final : public OpKernel {
 public:
  explicit Attention(const KernelInfo& info)
      : is_causal_(info.GetIntOr("is_causal", 0) != 0),
        q_heads_attr_(info.GetIntOr("q_num_heads", 0)),
        kv_heads_attr_(info.GetIntOr("kv_num_heads", 0)),
        mode_(info.GetIntOr("qk_matmul_output_mode", 0)),
        has_scale_(info.HasAttr("scale")),
        scale_(info.GetFloatOr("scale", 1.0f)),
        softcap_(info.GetFloatOr("softcap", 0.0f)),
        has_nonpad_input_(info.opset() >= 24),
        softmax_double_(info.GetIntOr("softmax_precision", 0) == static_cast<int64_t>(DataType::kDouble)) {
    if (mode_ < 0 || mode_ > 3) info.Fail(StrCat("qk_matmul_output_mode must be in [0, 3], got ", mode_));
    if (softcap_ < 0.0f) info.Fail(StrCat("softcap must be non-negative, got ", softcap_));
    if (q_heads_attr_ < 0 || kv_heads_attr_ < 0) info.Fail("q_num_heads and kv_num_heads must be positive");
    const auto precision = static_cast<DataType>(info.GetIntOr("softmax_precision", 1));
    if (!TryDispatch(FloatTypes{}, precision, [](auto) {}))
      info.Fail(StrCat("softmax_precision ", static_cast<int>(precision), " is not a floating-point type"));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& q = ctx.required_input(0);
    Dispatch(FloatTypes{}, q.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      // A double softmax_precision makes the whole computation double.
      if (std::is_same_v<T, double> || softmax_double_)
        ComputeTyped<T, double>(ctx);
      else
        ComputeTyped<T, float>(ctx);
    });
  }

 private:
  struct Dims {
    int64_t batch, q_heads, kv_heads, q_len, kv_len, past_len, total_len, head, v_head;
  };

  // Copies a 3-D [B, L, H*D] or 4-D [B, H, L, D] tensor into [B, H, L_dst, D] rows at offset `at`.
  template <typename T, typename C>
  static void LoadHeads(const Tensor& t, int64_t heads, int64_t len, int64_t dim, int64_t dst_len, int64_t at, C* dst) {
    const T* p = t.data<T>();
    const int64_t batch = t.dim(0);
    const bool packed = t.rank() == 3;
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t l = 0; l < len; ++l) {
          const T* src = packed ? p + (b * len + l) * heads * dim + h * dim : p + ((b * heads + h) * len + l) * dim;
          compute::ToComputeArray(src, dim, dst + ((b * heads + h) * dst_len + at + l) * dim);
        }
  }

  // present = concat(past, new) along the sequence, in the input's own type (no rounding).
  template <typename T>
  static void WritePresent(KernelContext& ctx, size_t index, const Tensor* past, const Tensor& fresh, const Dims& d,
                           int64_t dim) {
    if (!ctx.has_output(index)) return;
    Tensor& out = ctx.AllocateOutput(index, fresh.dtype(), {d.batch, d.kv_heads, d.total_len, dim});
    T* o = out.data<T>();
    const T* f = fresh.data<T>();
    const bool packed = fresh.rank() == 3;
    for (int64_t b = 0; b < d.batch; ++b)
      for (int64_t h = 0; h < d.kv_heads; ++h) {
        T* dst = o + (b * d.kv_heads + h) * d.total_len * dim;
        if (past != nullptr)
          std::memcpy(dst, past->data<T>() + (b * d.kv_heads + h) * d.past_len * dim, sizeof(T) * d.past_len * dim);
        for (int64_t l = 0; l < d.kv_len; ++l) {
          const T* src = packed ? f + (b * d.kv_len + l) * d.kv_heads * dim + h * dim
                                : f + ((b * d.kv_heads + h) * d.kv_len + l) * dim;
          std::memcpy(dst + (d.past_len + l) * dim, src, sizeof(T) * dim);
        }
      }
  }

  template <typename T, typename C>
  void ComputeTyped(KernelContext& ctx) const {
    const Tensor& q = ctx.required_input(0);
    const Tensor& k = ctx.required_input(1);
    const Tensor& v = ctx.required_input(2);
    const Tensor* mask = ctx.input(3);
    const Tensor* past_k = ctx.input(4);
    const Tensor* past_v = ctx.input(5);
    const Tensor* nonpad = has_nonpad_input_ ? ctx.input(6) : nullptr;
    if (k.dtype() != q.dtype()) ctx.Fail("Q and K must share one element type");
    if (q.rank() != k.rank() || q.rank() != v.rank() || (q.rank() != 3 && q.rank() != 4))
      ctx.Fail("Q, K and V must all be 3-D or all be 4-D");
    Dims d{};
    d.batch = q.dim(0);
    if (k.dim(0) != d.batch || v.dim(0) != d.batch) ctx.Fail("Q, K and V must have the same batch size");
    if (q.rank() == 4) {
      d.q_heads = q.dim(1), d.q_len = q.dim(2), d.head = q.dim(3);
      d.kv_heads = k.dim(1), d.kv_len = k.dim(2);
      if (k.dim(3) != d.head) ctx.Fail("K's head size differs from Q's");
      if (v.dim(1) != d.kv_heads || v.dim(2) != d.kv_len) ctx.Fail("V must have K's heads and sequence length");
      d.v_head = v.dim(3);
    } else {
      d.q_heads = q_heads_attr_, d.kv_heads = kv_heads_attr_;
      if (d.q_heads <= 0 || d.kv_heads <= 0) ctx.Fail("3-D inputs need q_num_heads and kv_num_heads");
      if (q.dim(2) % d.q_heads || k.dim(2) % d.kv_heads || v.dim(2) % d.kv_heads)
        ctx.Fail("hidden sizes must be multiples of the head counts");
      d.q_len = q.dim(1), d.head = q.dim(2) / d.q_heads;
      d.kv_len = k.dim(1);
      if (k.dim(2) / d.kv_heads != d.head) ctx.Fail("K's head size differs from Q's");
      if (v.dim(1) != d.kv_len) ctx.Fail("V must have K's sequence length");
      d.v_head = v.dim(2) / d.kv_heads;
    }
    if (d.kv_heads <= 0 || d.q_heads % d.kv_heads != 0)
      ctx.Fail(StrCat("q_num_heads (", d.q_heads, ") must be a multiple of kv_num_heads (", d.kv_heads, ")"));
    if ((past_k == nullptr) != (past_v == nullptr)) ctx.Fail("past_key and past_value must be given together");
    d.past_len = 0;
    if (past_k != nullptr) {
      if (past_k->dtype() != q.dtype() || past_v->dtype() != v.dtype())
        ctx.Fail("past_key must have Q's element type and past_value V's");
      d.past_len = past_k->rank() == 4 ? past_k->dim(2) : -1;
      const Shape want_k{d.batch, d.kv_heads, d.past_len, d.head};
      const Shape want_v{d.batch, d.kv_heads, d.past_len, d.v_head};
      if (past_k->shape() != want_k || past_v->shape() != want_v)
        ctx.Fail(StrCat("past_key/past_value must be [B, kv_heads, past, D]: ", ShapeToString(want_k), " and ",
                        ShapeToString(want_v)));
    }
    d.total_len = d.past_len + d.kv_len;

    // Mask broadcast to [B, Hq, Lq, Lm]; columns j >= Lm count as masked.
    int64_t mask_strides[4] = {0, 0, 0, 0};
    int64_t mask_len = 0;
    if (mask != nullptr) {
      if (mask->rank() < 1 || mask->rank() > 4)
        ctx.Fail(StrCat("attn_mask must have rank 1 to 4, got ", mask->Describe()));
      mask_len = mask->shape().back();
      if (mask_len > d.total_len)
        ctx.Fail(StrCat("attn_mask's last dimension ", mask_len, " exceeds the total KV length ", d.total_len));
      const int64_t target[3] = {d.batch, d.q_heads, d.q_len};
      int64_t stride = mask_len;
      mask_strides[3] = 1;
      for (int axis = 2; axis >= 0; --axis) {
        const int64_t md = axis - (4 - static_cast<int>(mask->rank()));
        const int64_t dim = md >= 0 ? mask->dim(md) : 1;
        if (dim != 1 && dim != target[axis])
          ctx.Fail(StrCat("attn_mask ", mask->Describe(), " does not broadcast to [", d.batch, ", ", d.q_heads, ", ",
                          d.q_len, ", ", d.total_len, "]"));
        mask_strides[axis] = dim == 1 ? 0 : stride;
        stride *= dim;
      }
    }
    // The mask as an additive bias: true -> 0, false -> -inf; numbers are added as they are.
    std::vector<C> mask_bias;
    if (mask != nullptr) {
      mask_bias.resize(static_cast<size_t>(mask->size()));
      if (mask->dtype() == DataType::kBool) {
        for (int64_t i = 0; i < mask->size(); ++i)
          mask_bias[i] = mask->data<bool>()[i] ? C(0) : -std::numeric_limits<C>::infinity();
      } else {
        Dispatch(NumericTypes{}, mask->dtype(), ctx.node(), [&](auto tag) {
          using M = typename decltype(tag)::type;
          for (int64_t i = 0; i < mask->size(); ++i) mask_bias[i] = static_cast<C>(ToCompute(mask->data<M>()[i]));
        });
      }
    }
    std::vector<int64_t> nonpad_len;
    if (nonpad != nullptr) {
      if (nonpad->rank() != 1 || nonpad->dim(0) != d.batch || nonpad->dtype() != DataType::kInt64)
        ctx.Fail(StrCat("nonpad_kv_seqlen must be int64 [", d.batch, "], got ", nonpad->Describe()));
      nonpad_len.assign(nonpad->data<int64_t>(), nonpad->data<int64_t>() + d.batch);
    }

    std::vector<C> qs(static_cast<size_t>(d.batch * d.q_heads * d.q_len * d.head));
    std::vector<C> ks(static_cast<size_t>(d.batch * d.kv_heads * d.total_len * d.head));
    std::vector<C> vs(static_cast<size_t>(d.batch * d.kv_heads * d.total_len * d.v_head));
    LoadHeads<T>(q, d.q_heads, d.q_len, d.head, d.q_len, 0, qs.data());
    if (past_k != nullptr) LoadHeads<T>(*past_k, d.kv_heads, d.past_len, d.head, d.total_len, 0, ks.data());
    LoadHeads<T>(k, d.kv_heads, d.kv_len, d.head, d.total_len, d.past_len, ks.data());
    WritePresent<T>(ctx, 1, past_k, k, d, d.head);
    // V may have its own float type (T2).
    Dispatch(FloatTypes{}, v.dtype(), ctx.node(), [&](auto vtag) {
      using TV = typename decltype(vtag)::type;
      if (past_v != nullptr) LoadHeads<TV>(*past_v, d.kv_heads, d.past_len, d.v_head, d.total_len, 0, vs.data());
      LoadHeads<TV>(v, d.kv_heads, d.kv_len, d.v_head, d.total_len, d.past_len, vs.data());
      WritePresent<TV>(ctx, 2, past_v, v, d, d.v_head);
    });

    const Shape y_shape =
        q.rank() == 4 ? Shape{d.batch, d.q_heads, d.q_len, d.v_head} : Shape{d.batch, d.q_len, d.q_heads * d.v_head};
    T* y = ctx.AllocateOutput(0, q.dtype(), y_shape).template data<T>();
    T* qk_out = ctx.has_output(3)
                    ? ctx.AllocateOutput(3, q.dtype(), {d.batch, d.q_heads, d.q_len, d.total_len}).template data<T>()
                    : nullptr;
    const C scale = has_scale_ ? static_cast<C>(scale_) : C(1) / std::sqrt(static_cast<C>(d.head));
    const C softcap = static_cast<C>(softcap_);
    const C neg_inf = -std::numeric_limits<C>::infinity();
    const int64_t group = d.q_heads / d.kv_heads;
    const int64_t lq = d.q_len, lt = d.total_len;
    const double cost = static_cast<double>(lq * lt * (d.head + d.v_head + 8));
    ThreadPool::For(ctx.thread_pool(), d.batch * d.q_heads, cost, [&](int64_t begin, int64_t end) {
      std::vector<C> scores(static_cast<size_t>(lq * lt)), out(static_cast<size_t>(lq * d.v_head));
      for (int64_t bh = begin; bh < end; ++bh) {
        const int64_t b = bh / d.q_heads, h = bh % d.q_heads, kvh = b * d.kv_heads + h / group;
        compute::Gemm<C>(false, true, lq, lt, d.head, scale, qs.data() + bh * lq * d.head, d.head,
                         ks.data() + kvh * lt * d.head, d.head, C(0), scores.data(), lt, nullptr);
        T* qk_row = qk_out ? qk_out + bh * lq * lt : nullptr;
        auto emit = [&](int64_t mode) {
          if (qk_row != nullptr && mode_ == mode) compute::FromComputeArray(scores.data(), lq * lt, qk_row);
        };
        emit(0);
        if (softcap > C(0))
          for (C& s : scores) s = softcap * std::tanh(s / softcap);
        emit(1);
        for (int64_t i = 0; i < lq; ++i) {
          C* row = scores.data() + i * lt;
          if (mask != nullptr) {
            const int64_t base = b * mask_strides[0] + h * mask_strides[1] + i * mask_strides[2];
            const C* mp = mask_bias.data() + base;
            for (int64_t j = 0; j < mask_len; ++j) row[j] += mp[j];
            for (int64_t j = mask_len; j < lt; ++j) row[j] = neg_inf;
          }
          if (is_causal_) {
            // Bottom-right aligned to the cache: query i sees keys j <= i + offset.
            const int64_t offset = past_k == nullptr && nonpad != nullptr ? nonpad_len[b] - lq : d.past_len;
            for (int64_t j = std::max<int64_t>(0, i + offset + 1); j < lt; ++j) row[j] = neg_inf;
          }
          if (nonpad != nullptr)
            for (int64_t j = std::max<int64_t>(0, nonpad_len[b]); j < lt; ++j) row[j] = neg_inf;
        }
        emit(2);
        for (int64_t i = 0; i < lq; ++i) SoftmaxRow(scores.data() + i * lt, lt);
        emit(3);
        compute::Gemm<C>(false, false, lq, d.v_head, lt, C(1), scores.data(), lt, vs.data() + kvh * lt * d.v_head,
                         d.v_head, C(0), out.data(), d.v_head, nullptr);
        for (int64_t i = 0; i < lq; ++i) {
          T* dst =
              q.rank() == 4 ? y + (bh * lq + i) * d.v_head : y + (b * lq + i) * d.q_heads * d.v_head + h * d.v_head;
          compute::FromComputeArray(out.data() + i * d.v_head, d.v_head, dst);
        }
      }
    });
  }

  bool is_causal_;
  int64_t q_heads_attr_;
  int64_t kv_heads_attr_;
  int64_t mode_;
  bool has_scale_;
  float scale_;
  float softcap_;
  bool has_nonpad_input_;
  bool softmax_double_;
};

ONYX_CPU_KERNEL("Attention", 23, 23, Attention);
ONYX_CPU_KERNEL("Attention", 24, kOpsetMax, Attention);  // adds nonpad_kv_seqlen

}  // namespace
}  // namespace onyx
