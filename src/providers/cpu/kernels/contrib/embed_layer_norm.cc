// com.microsoft.EmbedLayerNormalization (BERT embeddings): for every token
//   e = word_embedding[input_ids] + position_embedding[position] (+ segment_embedding[segment_ids])
//   output = LayerNorm(e) * gamma + beta
// position is position_ids[b, s] (shape (B, S) or (1, S)) or s. Outputs: output (B, S, H),
// mask_index (B) = number of ones in each mask row (0 without a mask), embedding_sum = e.
// Ids out of range fail the node. float, float16 and bfloat16 (the embeddings, gamma and beta
// share one type; the sums and statistics are computed in float, each output rounded once).
// ONNX Runtime's CPU kernel is float only and runs float16 models through inserted Casts,
// which round the same way.
#include <atomic>
#include <cmath>
#include <vector>

#include "base/type_traits.h"
#include "platform/thread_pool.h"
#include "providers/kernel.h"

namespace onyx::contrib {
namespace {

std::vector<int64_t> IdValues(KernelContext& ctx, const Tensor& t, const char* name) {
  std::vector<int64_t> v(static_cast<size_t>(t.size()));
  if (t.dtype() == DataType::kInt32) {
    for (int64_t i = 0; i < t.size(); ++i) v[i] = t.data<int32_t>()[i];
  } else if (t.dtype() == DataType::kInt64) {
    for (int64_t i = 0; i < t.size(); ++i) v[i] = t.data<int64_t>()[i];
  } else {
    ctx.Fail(StrCat("input '", name, "' must be int32, got ", DataTypeName(t.dtype())));
  }
  return v;
}

class EmbedLayerNorm final : public OpKernel {
 public:
  explicit EmbedLayerNorm(const KernelInfo& info) : epsilon_(info.GetFloatOr("epsilon", 1e-12f)) {
    if (epsilon_ < 0) info.Fail(StrCat("attribute 'epsilon' must be >= 0, got ", epsilon_));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& input_ids = ctx.required_input(0);
    const Tensor* segment_ids = ctx.input(1);
    const Tensor& word = ctx.required_input(2);
    const Tensor& position = ctx.required_input(3);
    const Tensor* segment = ctx.input(4);
    const Tensor& gamma = ctx.required_input(5);
    const Tensor& beta = ctx.required_input(6);
    const Tensor* mask = ctx.input(7);
    const Tensor* position_ids = ctx.input(8);
    const DataType dt = word.dtype();
    if (dt != DataType::kFloat && dt != DataType::kFloat16 && dt != DataType::kBFloat16)
      ctx.Fail(StrCat("element type ", DataTypeName(dt), " is not supported (float, float16, bfloat16)"));
    for (const Tensor* t : {&position, segment, &gamma, &beta})
      if (t && t->dtype() != dt)
        ctx.Fail(StrCat("the embeddings, gamma and beta must share one element type: word_embedding is ",
                        DataTypeName(dt), ", another input is ", DataTypeName(t->dtype())));
    if (input_ids.rank() != 2) ctx.Fail("input_ids must be 2-D (batch, sequence)");
    const int64_t B = input_ids.dim(0), S = input_ids.dim(1);
    if (word.rank() != 2 || position.rank() != 2) ctx.Fail("word and position embeddings must be 2-D");
    const int64_t H = word.dim(1);
    if (position.dim(1) != H || (segment && (segment->rank() != 2 || segment->dim(1) != H)))
      ctx.Fail(StrCat("embeddings must all have hidden size ", H));
    if ((segment_ids == nullptr) != (segment == nullptr))
      ctx.Fail("segment_ids and segment_embedding must be given together");
    if (segment_ids && segment_ids->shape() != input_ids.shape()) ctx.Fail("segment_ids must have input_ids' shape");
    if (mask && mask->shape() != input_ids.shape()) ctx.Fail("mask must have input_ids' shape");
    if (gamma.rank() != 1 || gamma.dim(0) != H || beta.rank() != 1 || beta.dim(0) != H)
      ctx.Fail(StrCat("gamma and beta must be 1-D of size ", H));
    if (position_ids && !(position_ids->rank() == 2 && (position_ids->dim(0) == B || position_ids->dim(0) == 1) &&
                          position_ids->dim(1) == S))
      ctx.Fail(StrCat("position_ids must be (", B, ", ", S, ") or (1, ", S, ")"));

    const std::vector<int64_t> ids = IdValues(ctx, input_ids, "input_ids");
    const std::vector<int64_t> seg = segment_ids ? IdValues(ctx, *segment_ids, "segment_ids") : std::vector<int64_t>{};
    const std::vector<int64_t> pos = position_ids ? IdValues(ctx, *position_ids, "position_ids") : std::vector<int64_t>{};
    const bool pos_bcast = position_ids && position_ids->dim(0) == 1;
    const int64_t V = word.dim(0), Pn = position.dim(0), Sn = segment ? segment->dim(0) : 0;
    // Check every index first so a bad id fails the node before any output is written.
    for (int64_t i = 0; i < B * S; ++i) {
      if (ids[i] < 0 || ids[i] >= V) ctx.Fail(StrCat("input_ids value ", ids[i], " is out of range [0, ", V, ")"));
      const int64_t p = position_ids ? pos[pos_bcast ? i % S : i] : i % S;
      if (p < 0 || p >= Pn) ctx.Fail(StrCat("position ", p, " is out of range [0, ", Pn, ")"));
      if (segment && (seg[i] < 0 || seg[i] >= Sn))
        ctx.Fail(StrCat("segment_ids value ", seg[i], " is out of range [0, ", Sn, ")"));
    }

    Tensor& out = ctx.AllocateOutput(0, dt, {B, S, H});
    Tensor& mask_index = ctx.AllocateOutput(1, DataType::kInt32, {B});
    Tensor* emb_sum = ctx.has_output(2) ? &ctx.AllocateOutput(2, dt, {B, S, H}) : nullptr;
    const Rows rows{ids, seg, pos, pos_bcast, position_ids != nullptr, S, H};
    if (dt == DataType::kFloat16)
      Normalize<Float16>(ctx, rows, word, position, segment, gamma, beta, out, emb_sum);
    else if (dt == DataType::kBFloat16)
      Normalize<BFloat16>(ctx, rows, word, position, segment, gamma, beta, out, emb_sum);
    else
      Normalize<float>(ctx, rows, word, position, segment, gamma, beta, out, emb_sum);
    const std::vector<int64_t> m = mask ? IdValues(ctx, *mask, "mask") : std::vector<int64_t>{};
    for (int64_t b = 0; b < B; ++b) {
      int32_t count = 0;
      for (int64_t s = 0; mask && s < S; ++s) count += m[b * S + s] == 1;
      mask_index.data<int32_t>()[b] = count;
    }
  }

 private:
  struct Rows {
    const std::vector<int64_t>& ids;
    const std::vector<int64_t>& seg;
    const std::vector<int64_t>& pos;
    bool pos_bcast, has_position_ids;
    int64_t S, H;
  };

  template <typename T>
  void Normalize(KernelContext& ctx, const Rows& r, const Tensor& word, const Tensor& position, const Tensor* segment,
                 const Tensor& gamma, const Tensor& beta, Tensor& out, Tensor* emb_sum) const {
    const int64_t H = r.H, S = r.S;
    std::vector<float> g(static_cast<size_t>(H)), bt(static_cast<size_t>(H));
    for (int64_t h = 0; h < H; ++h) {
      g[h] = static_cast<float>(ToCompute(gamma.data<T>()[h]));
      bt[h] = static_cast<float>(ToCompute(beta.data<T>()[h]));
    }
    const int64_t rows = out.size() / std::max<int64_t>(H, 1);
    ThreadPool::For(ctx.thread_pool(), H ? rows : 0, 8.0 * H, [&](int64_t begin, int64_t end) {
      std::vector<float> y(static_cast<size_t>(H));
      for (int64_t i = begin; i < end; ++i) {
        const int64_t p = r.has_position_ids ? r.pos[r.pos_bcast ? i % S : i] : i % S;
        const T* w = word.data<T>() + r.ids[i] * H;
        const T* pe = position.data<T>() + p * H;
        const T* se = segment ? segment->data<T>() + r.seg[i] * H : nullptr;
        T* es = emb_sum ? emb_sum->data<T>() + i * H : nullptr;
        float sum = 0.0f;
        for (int64_t h = 0; h < H; ++h) {
          float v = static_cast<float>(ToCompute(w[h])) + static_cast<float>(ToCompute(pe[h]));
          if (se) v += static_cast<float>(ToCompute(se[h]));
          if (es) es[h] = FromCompute<T>(v);
          y[h] = v;
          sum += v;
        }
        const float mean = sum / static_cast<float>(H);
        float sq = 0.0f;
        for (int64_t h = 0; h < H; ++h) {
          y[h] -= mean;
          sq += y[h] * y[h];
        }
        const float inv = 1.0f / std::sqrt(sq / static_cast<float>(H) + epsilon_);
        T* dst = out.data<T>() + i * H;
        for (int64_t h = 0; h < H; ++h) dst[h] = FromCompute<T>(y[h] * inv * g[h] + bt[h]);
      }
    });
  }

  float epsilon_;
};

ONYX_REGISTER_KERNEL("CPU", "com.microsoft", "EmbedLayerNormalization", 1, kOpsetMax, EmbedLayerNorm);

}  // namespace
}  // namespace onyx::contrib
