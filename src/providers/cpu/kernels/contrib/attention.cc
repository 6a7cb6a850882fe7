// com.microsoft.Attention: multi-head self attention with the Q/K/V projection fused in
// (weights [D_in, D + D + D_v], bias [D + D + D_v]). mask_index forms: (B) end positions,
// (2B) end + start positions, (B, T) 0/1 key padding, (B, S, T), (B, 1, M, M) Megatron; past
// (2, B, N, P, H) and present (2, B, N, P + S, H); attention_bias (B|1, N|1, S, T); causal via
// unidirectional. Masked scores get mask_filter_value added, as in ONNX Runtime's CPU kernel.
// float; float16/bfloat16 compute in float with outputs rounded once (ONNX Runtime's CPU kernel is
// float-only and runs them through inserted Casts); do_rotary and past_present_share_buffer
// are rejected as ONNX Runtime's CPU kernel does.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "base/int_math.h"
#include "linalg/gemm.h"
#include "platform/thread_pool.h"
#include "providers/cpu/kernels/contrib/attention_core.h"
#include "providers/cpu/kernels/linalg/bf16_weights.h"
#include "providers/cpu/kernels/linalg/packed_weights.h"
#include "providers/cpu/kernels/contrib/float_compute.h"
#include "providers/kernel.h"

namespace onyx::contrib {
namespace {

// Query rows per block when a head's rows are split across threads: enough to keep the
// scores GEMM's row panels full.
constexpr int64_t kMinBlockRows = 32;

class Attention final : public OpKernel {
 public:
  explicit Attention(const KernelInfo& info)
      : num_heads_(info.GetInt("num_heads")),
        qkv_hidden_sizes_(info.GetIntsOr("qkv_hidden_sizes", {})),
        unidirectional_(info.GetIntOr("unidirectional", 0) != 0),
        scale_(info.GetFloatOr("scale", 0.0f)),
        mask_filter_value_(info.GetFloatOr("mask_filter_value", -10000.0f)),
        packed_weights_(linalg_kernels::WantsBf16B(info, 1) ? nullptr : linalg_kernels::PackConstantB(info, 1, false)),
        bf16_weights_(linalg_kernels::PackConstantBf16B(info, 1, false)) {
    // A constant bias is copied too, so that the session can free both originals.
    if (const Tensor* bias = info.ConstantInput(2);
        (packed_weights_ || bf16_weights_) && bias != nullptr && bias->dtype() == DataType::kFloat && bias->rank() == 1) {
      bias_.assign(bias->data<float>(), bias->data<float>() + bias->size());
      have_bias_ = true;
    }
    if (num_heads_ <= 0) info.Fail(StrCat("attribute 'num_heads' must be positive, got ", num_heads_));
    if (!qkv_hidden_sizes_.empty()) {
      if (qkv_hidden_sizes_.size() != 3) info.Fail("attribute 'qkv_hidden_sizes' must have 3 values");
      for (int64_t v : qkv_hidden_sizes_)
        if (v <= 0 || v % num_heads_ != 0)
          info.Fail(StrCat("attribute 'qkv_hidden_sizes' values must be positive multiples of num_heads (",
                           num_heads_, "), got ", v));
      if (qkv_hidden_sizes_[0] != qkv_hidden_sizes_[1])
        info.Fail("attribute 'qkv_hidden_sizes': Q and K hidden sizes must be equal");
    }
    if (info.GetIntOr("do_rotary", 0) != 0)
      info.Fail("do_rotary is not supported by the CPU Attention kernel (as in ONNX Runtime); use "
                "MultiHeadAttention with RotaryEmbedding");
    if (info.GetIntOr("past_present_share_buffer", 0) != 0)
      info.Fail("past_present_share_buffer is not supported by the CPU Attention kernel (as in ONNX Runtime)");
  }

  bool ReadsConstantInputAtRun(size_t input) const override {
    return !((input == 1 && (packed_weights_ || bf16_weights_)) || (input == 2 && have_bias_));
  }

  void Compute(KernelContext& ctx) const override {
    if (!HasHalfInputs(ctx)) return ComputeFloat(ctx);
    // float16/bfloat16 compute in float, as ONNX Runtime's Casts around its float kernel do.
    const DataType dt = CommonInputType(ctx, {0, 1, 2, 4, 5});
    FloatComputeContext wide(ctx);
    ComputeFloat(wide);
    wide.Finish(dt);
  }

 private:
  void ComputeFloat(KernelContext& ctx) const {
    const Tensor& input = ctx.required_input(0);
    const Tensor* weights_in = packed_weights_ || bf16_weights_ ? nullptr : &ctx.required_input(1);
    const Tensor* bias_in = have_bias_ ? nullptr : ctx.input(2);
    const Tensor* mask = ctx.input(3);
    const Tensor* past = ctx.input(4);
    const Tensor* attn_bias = ctx.input(5);
    for (const Tensor* t : {&input, weights_in, bias_in, past, attn_bias})
      if (t && t->dtype() != DataType::kFloat)
        ctx.Fail(StrCat("element type ", DataTypeName(t->dtype()), " is not supported (float, float16, bfloat16)"));
    if (input.rank() != 3) ctx.Fail("input 'input' must be 3-D (batch, sequence, input_hidden)");
    const int64_t w_rows = packed_weights_ ? packed_weights_->k()
                           : bf16_weights_ ? bf16_weights_->k()
                           : weights_in->rank() == 2 ? weights_in->dim(0) : -1;
    if (w_rows != input.dim(2))
      ctx.Fail("input 'weights' must be 2-D with dim 0 equal to the input's hidden size");
    const int64_t B = input.dim(0), S = input.dim(1), Din = input.dim(2);
    const int64_t Dt = packed_weights_ ? packed_weights_->n() : bf16_weights_ ? bf16_weights_->n() : weights_in->dim(1);
    const bool has_bias = have_bias_ || bias_in != nullptr;
    const int64_t bias_size = have_bias_ ? static_cast<int64_t>(bias_.size()) : bias_in ? bias_in->size() : 0;
    const bool bias_1d = have_bias_ || (bias_in && bias_in->rank() == 1);
    const int64_t N = num_heads_;
    int64_t D = Dt / 3, Dv = Dt / 3;
    if (!qkv_hidden_sizes_.empty()) {
      D = qkv_hidden_sizes_[0];
      Dv = qkv_hidden_sizes_[2];
    }
    if (D + D + Dv != Dt)
      ctx.Fail(StrCat("weights dim 1 (", Dt, ") must equal the sum of the Q/K/V hidden sizes (", D + D + Dv, ")"));
    if (D % N != 0 || Dv % N != 0 || D == 0)
      ctx.Fail(StrCat("hidden sizes ", D, "/", Dv, " must be positive multiples of num_heads ", N));
    if (has_bias && (!bias_1d || bias_size != Dt))
      ctx.Fail(StrCat("input 'bias' must have shape (", Dt, ")"));
    const int64_t H = D / N, Hv = Dv / N;

    int64_t P = 0;
    if (past) {
      if (D != Dv) ctx.Fail("input 'past' needs equal K and V hidden sizes");
      const Shape& pd = past->shape();
      if (pd.size() != 5 || pd[0] != 2 || pd[1] != B || pd[2] != N || pd[4] != H)
        ctx.Fail(StrCat("input 'past' must have shape (2, ", B, ", ", N, ", past_sequence_length, ", H, ")"));
      P = pd[3];
    }
    const int64_t T = P + S;
    const bool want_present = ctx.has_output(1);
    if (want_present && D != Dv) ctx.Fail("output 'present' needs equal K and V hidden sizes");
    if (mask && mask->rank() == 4 && unidirectional_)
      ctx.Fail("a 4-D mask_index requires unidirectional = 0");

    std::pair<int64_t, int64_t> bias_strides{0, 0};
    if (attn_bias) bias_strides = AttentionBiasStrides(ctx, *attn_bias, B, N, S, T);
    const std::vector<float> add_mask =
        BuildAdditiveMask(ctx, mask, B, S, P, T, unidirectional_ && S > 1, mask_filter_value_, "mask_index");

    Tensor& out = ctx.AllocateOutput(0, DataType::kFloat, {B, S, Dv});
    float* present = want_present ? ctx.AllocateOutput(1, DataType::kFloat, {2, B, N, T, H}).data<float>() : nullptr;
    if (B * S == 0) return;

    // qkv[B*S, Dt] = input . weights + bias, one GEMM over every token with the bias added in
    // its epilogue. Every element is written: no zero-fill.
    const std::unique_ptr<float[]> qkv_buffer(new float[static_cast<size_t>(B * S * Dt)]);
    float* const qkv = qkv_buffer.get();
    linalg::GemmEpilogue epilogue;
    epilogue.bias_per_col = have_bias_ ? bias_.data() : bias_in ? bias_in->data<float>() : nullptr;
    const linalg::GemmEpilogue* ep = has_bias ? &epilogue : nullptr;
    if (bf16_weights_)  // a bfloat16 model's projections (linalg::kBf16Attribute)
      linalg::Bf16GemmPackedB(false, B * S, Dt, Din, 1.0f, input.data<float>(), Din, *bf16_weights_, 0.0f, qkv, Dt,
                              ctx.thread_pool(), ep);
    else if (packed_weights_)
      linalg::SgemmPackedB(false, B * S, Dt, Din, 1.0f, input.data<float>(), Din, *packed_weights_, 0.0f, qkv, Dt,
                           ctx.thread_pool(), ep);
    else
      linalg::Sgemm(false, false, B * S, Dt, Din, 1.0f, input.data<float>(), Din, weights_in->data<float>(), Dt, 0.0f,
                    qkv, Dt, ctx.thread_pool(), ep);

    const float scale = scale_ == 0.0f ? 1.0f / std::sqrt(static_cast<float>(H)) : scale_;
    const float* past_k = past ? past->data<float>() : nullptr;
    const float* past_v = past ? past->data<float>() + B * N * P * H : nullptr;
    const bool concat = past != nullptr || present != nullptr;
    float* out_data = out.data<float>();
    // Fewer (batch, head) pairs than threads, or a count they do not divide (ViT-tiny's 3 heads
    // on 2 threads ran 2 + 1), also split the query rows into blocks; each block repeats only
    // the packing of its head's K. Past / present concatenation stays one task per head.
    ThreadPool* const pool = ctx.thread_pool();
    const int64_t threads = pool != nullptr ? pool->num_threads() : 1;
    int64_t row_blocks = 1;
    if (!concat && threads > 1 && (B * N) % threads != 0)
      row_blocks = std::min(CeilDiv(2 * threads, B * N), std::max<int64_t>(1, S / kMinBlockRows));
    const int64_t block_rows = CeilDiv(S, row_blocks);
    row_blocks = CeilDiv(S, block_rows);
    ThreadPool::For(pool, B * N * row_blocks, AttendCost(block_rows, T, H, Hv), [&](int64_t begin, int64_t end) {
      std::vector<float> scratch(static_cast<size_t>(block_rows * T));
      std::vector<float> kv_local(concat && !present ? static_cast<size_t>(T * (H + Hv)) : 0);
      for (int64_t task = begin; task < end; ++task) {
        const int64_t i = task / row_blocks, s0 = task % row_blocks * block_rows;
        const int64_t rows_here = std::min(block_rows, S - s0);
        const int64_t b = i / N, h = i % N;
        const float* rows = qkv + b * S * Dt;
        const float* q = rows + h * H;
        const float* k = rows + D + h * H;
        const float* v = rows + 2 * D + h * Hv;
        int64_t k_stride = Dt, v_stride = Dt;
        if (concat) {
          // Concatenate past and new rows: present chunk (b, h) or a local buffer.
          float* kc = present ? present + (b * N + h) * T * H : kv_local.data();
          float* vc = present ? present + B * N * T * H + (b * N + h) * T * Hv : kv_local.data() + T * H;
          if (past_k) {
            std::memcpy(kc, past_k + (b * N + h) * P * H, P * H * sizeof(float));
            std::memcpy(vc, past_v + (b * N + h) * P * Hv, P * Hv * sizeof(float));
          }
          GatherRows(k, Dt, S, H, nullptr, kc + P * H, H);
          GatherRows(v, Dt, S, Hv, nullptr, vc + P * Hv, Hv);
          k = kc;
          v = vc;
          k_stride = H;
          v_stride = Hv;
        }
        ScoreRules rules;  // rows s0 .. s0 + rows_here of the head
        if (!add_mask.empty()) rules.mask = add_mask.data() + (b * S + s0) * T;
        if (unidirectional_ && S > 1) rules.causal_offset = P + s0;  // the mask has them too; this skips the work
        if (attn_bias) {
          rules.bias = attn_bias->data<float>() + b * bias_strides.first + h * bias_strides.second + s0 * T;
          rules.bias_stride = T;
        }
        AttendHead(q + s0 * Dt, Dt, k, k_stride, v, v_stride, out_data + (b * S + s0) * Dv + h * Hv, Dv, rows_here, T,
                   H, Hv, scale, rules, scratch.data());
      }
    });
  }

 private:
  int64_t num_heads_;
  std::vector<int64_t> qkv_hidden_sizes_;
  bool unidirectional_;
  float scale_;
  float mask_filter_value_;
  // Constant QKV weights packed for the projection GEMM (null: read the input each run), and
  // the constant bias copied next to them.
  std::shared_ptr<const linalg::PackedB> packed_weights_;
  std::shared_ptr<const linalg::PackedBf16B> bf16_weights_;  // instead of packed_weights_ for a bfloat16 model
  std::vector<float> bias_;
  bool have_bias_ = false;
};

ONYX_REGISTER_KERNEL("CPU", "com.microsoft", "Attention", 1, kOpsetMax, Attention);

}  // namespace
}  // namespace onyx::contrib
