// RNN, GRU and LSTM: forward / reverse / bidirectional, every activation of the spec (with
// activation_alpha/beta), clip, sequence_lens, initial states, layout 0/1 (opset 14+), all
// optional outputs. float16/bfloat16 compute in float, double in double. The input projection
// X*W^T of all time steps is one GEMM; each step adds H*R^T with another.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <vector>

#include "base/type_traits.h"
#include "platform/thread_pool.h"
#include "providers/cpu/kernels/attention/compute_gemm.h"
#include "providers/cpu/kernels/linalg/packed_weights.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

enum class CellKind { kRnn, kGru, kLstm };

// One activation function of the spec's list, with its alpha/beta resolved.
struct Activation {
  enum class Kind {
    kRelu,
    kTanh,
    kSigmoid,
    kAffine,
    kLeakyRelu,
    kThresholdedRelu,
    kScaledTanh,
    kHardSigmoid,
    kElu,
    kSoftsign,
    kSoftplus
  };
  Kind kind = Kind::kTanh;
  float alpha = 0.0f;
  float beta = 0.0f;

  template <typename C>
  C operator()(C x) const {
    const C a = static_cast<C>(alpha), b = static_cast<C>(beta);
    switch (kind) {
      case Kind::kRelu:
        return x > C(0) ? x : C(0);
      case Kind::kTanh:
        return std::tanh(x);
      case Kind::kSigmoid:
        return x >= C(0) ? C(1) / (C(1) + std::exp(-x)) : std::exp(x) / (C(1) + std::exp(x));
      case Kind::kAffine:
        return a * x + b;
      case Kind::kLeakyRelu:
        return x >= C(0) ? x : a * x;
      case Kind::kThresholdedRelu:
        return x > a ? x : C(0);
      case Kind::kScaledTanh:
        return a * std::tanh(b * x);
      case Kind::kHardSigmoid:
        return std::max(C(0), std::min(C(1), a * x + b));
      case Kind::kElu:
        return x >= C(0) ? x : a * (std::exp(x) - C(1));
      case Kind::kSoftsign:
        return x / (C(1) + std::fabs(x));
      case Kind::kSoftplus:
        return x > C(20) ? x : std::log1p(std::exp(x));
    }
    return x;
  }
};

// Parses `activations` with `activation_alpha/beta` (consumed in order by the functions that
// take them; ONNX's operator defaults otherwise). Missing entries take the op's defaults.
std::vector<Activation> ParseActivations(const KernelInfo& info, const std::vector<std::string>& defaults,
                                         int num_dirs) {
  std::vector<std::string> names = info.GetStringsOr("activations", {});
  const size_t per_dir = defaults.size();
  if (names.empty()) {
    for (int d = 0; d < num_dirs; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  } else if (names.size() == per_dir && num_dirs == 2) {
    names.insert(names.end(), names.begin(), names.end());  // one set given for both directions
  }
  if (names.size() != per_dir * static_cast<size_t>(num_dirs))
    info.Fail(StrCat("'activations' has ", names.size(), " entries, expected ", per_dir * num_dirs));
  const std::vector<float> alphas = info.GetFloatsOr("activation_alpha", {});
  const std::vector<float> betas = info.GetFloatsOr("activation_beta", {});
  size_t ai = 0, bi = 0;
  auto next_alpha = [&](float fallback) { return ai < alphas.size() ? alphas[ai++] : fallback; };
  auto next_beta = [&](float fallback) { return bi < betas.size() ? betas[bi++] : fallback; };
  std::vector<Activation> out;
  for (const std::string& raw : names) {
    std::string n;
    for (char c : raw) n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    Activation a;
    using K = Activation::Kind;
    if (n == "relu")
      a.kind = K::kRelu;
    else if (n == "tanh")
      a.kind = K::kTanh;
    else if (n == "sigmoid")
      a.kind = K::kSigmoid;
    else if (n == "affine") {
      a.kind = K::kAffine;
      a.alpha = next_alpha(1.0f);
      a.beta = next_beta(0.0f);
    } else if (n == "leakyrelu") {
      a.kind = K::kLeakyRelu;
      a.alpha = next_alpha(0.01f);
    } else if (n == "thresholdedrelu") {
      a.kind = K::kThresholdedRelu;
      a.alpha = next_alpha(1.0f);
    } else if (n == "scaledtanh") {
      a.kind = K::kScaledTanh;
      a.alpha = next_alpha(1.0f);
      a.beta = next_beta(1.0f);
    } else if (n == "hardsigmoid") {
      a.kind = K::kHardSigmoid;
      a.alpha = next_alpha(0.2f);
      a.beta = next_beta(0.5f);
    } else if (n == "elu") {
      a.kind = K::kElu;
      a.alpha = next_alpha(1.0f);
    } else if (n == "softsign")
      a.kind = K::kSoftsign;
    else if (n == "softplus")
      a.kind = K::kSoftplus;
    else
      info.Fail(StrCat("unsupported activation '", raw, "'"));
    out.push_back(a);
  }
  return out;
}

// Weights of one direction in the compute type, transposed for row-major GEMMs.
template <typename C>
struct DirectionWeights {
  std::vector<C> w_t;     // [input, G*H]
  std::vector<C> r_t;     // [H, G*H]
  std::vector<C> w_bias;  // [G*H]
  std::vector<C> r_bias;  // [G*H]
  std::vector<C> peep;    // [3*H] (LSTM; zeros when absent)
  // w_t and r_t made through the session's creation cache (float only): used instead when set.
  linalg::AlignedFloats w_pack, r_pack;
  const C* W() const {
    if constexpr (std::is_same_v<C, float>) return w_pack.size() ? w_pack.data() : w_t.data();
    return w_t.data();
  }
  const C* R() const {
    if constexpr (std::is_same_v<C, float>) return r_pack.size() ? r_pack.data() : r_t.data();
    return r_t.data();
  }
};

// Rows of `src` [gh, cols] transposed into dst [cols, gh] in the compute type.
template <typename T, typename C>
void TransposeInto(const T* src, int64_t gh, int64_t cols, C* dst) {
  for (int64_t g = 0; g < gh; ++g)
    for (int64_t i = 0; i < cols; ++i) dst[i * gh + g] = static_cast<C>(ToCompute(src[g * cols + i]));
}

// source_w / source_r (float only; may be null): the creation cache's sources for W and R.
template <typename T, typename C>
std::vector<DirectionWeights<C>> PackWeights(const Tensor& w, const Tensor& r, const Tensor* b, const Tensor* p,
                                             int64_t gates, int64_t hidden,
                                             const linalg::PackSource* source_w = nullptr,
                                             const linalg::PackSource* source_r = nullptr) {
  const int64_t dirs = w.dim(0), input = w.dim(2), gh = gates * hidden;
  std::vector<DirectionWeights<C>> out(static_cast<size_t>(dirs));
  for (int64_t d = 0; d < dirs; ++d) {
    DirectionWeights<C>& dw = out[d];
    const T* wp = w.data<T>() + d * gh * input;
    const T* rp = r.data<T>() + d * gh * hidden;
    if constexpr (std::is_same_v<C, float>) {
      if (source_w != nullptr && *source_w && source_r != nullptr && *source_r) {
        const std::string form = StrCat("rnn_t:d", d, ":", DataTypeName(w.dtype()), ":gh", gh);
        dw.w_pack = linalg::MakePack(source_w, form, static_cast<size_t>(input * gh),
                                     [&](float* out_w) { TransposeInto(wp, gh, input, out_w); });
        dw.r_pack = linalg::MakePack(source_r, form, static_cast<size_t>(hidden * gh),
                                     [&](float* out_r) { TransposeInto(rp, gh, hidden, out_r); });
      }
    }
    if (dw.w_pack.size() == 0) {
      dw.w_t.resize(static_cast<size_t>(input * gh));
      dw.r_t.resize(static_cast<size_t>(hidden * gh));
      TransposeInto(wp, gh, input, dw.w_t.data());
      TransposeInto(rp, gh, hidden, dw.r_t.data());
    }
    dw.w_bias.assign(static_cast<size_t>(gh), C(0));
    dw.r_bias.assign(static_cast<size_t>(gh), C(0));
    if (b != nullptr) {
      const T* bp = b->data<T>() + d * 2 * gh;
      compute::ToComputeArray(bp, gh, dw.w_bias.data());
      compute::ToComputeArray(bp + gh, gh, dw.r_bias.data());
    }
    dw.peep.assign(static_cast<size_t>(3 * hidden), C(0));
    if (p != nullptr) compute::ToComputeArray(p->data<T>() + d * 3 * hidden, 3 * hidden, dw.peep.data());
  }
  return out;
}

class Recurrent final : public OpKernel {
 public:
  Recurrent(const KernelInfo& info, CellKind kind) : kind_(kind) {
    gates_ = kind == CellKind::kRnn ? 1 : kind == CellKind::kGru ? 3 : 4;
    hidden_ = info.GetIntOr("hidden_size", 0);
    if (hidden_ <= 0) info.Fail("attribute 'hidden_size' must be given and positive");
    const std::string dir = info.GetStringOr("direction", "forward");
    if (dir == "forward")
      direction_ = 0;
    else if (dir == "reverse")
      direction_ = 1;
    else if (dir == "bidirectional")
      direction_ = 2;
    else
      info.Fail(StrCat("unknown direction '", dir, "'"));
    num_dirs_ = direction_ == 2 ? 2 : 1;
    if (info.HasAttr("clip")) {
      clip_ = info.GetFloat("clip");
      if (!(clip_ > 0.0f)) info.Fail("attribute 'clip' must be positive");
    }
    // layout arrived in opset 14; earlier models are always [seq, batch, ...].
    layout_ = info.opset() >= 14 ? info.GetIntOr("layout", 0) : 0;
    if (layout_ != 0 && layout_ != 1) info.Fail(StrCat("attribute 'layout' must be 0 or 1, got ", layout_));
    // GRU-1 has no linear_before_reset (always 0).
    if (kind == CellKind::kGru && info.opset() >= 3)
      linear_before_reset_ = info.GetIntOr("linear_before_reset", 0) != 0;
    if (kind == CellKind::kLstm) input_forget_ = info.GetIntOr("input_forget", 0) != 0;
    std::vector<std::string> defaults;
    if (kind == CellKind::kRnn)
      defaults = {"Tanh"};
    else if (kind == CellKind::kGru)
      defaults = {"Sigmoid", "Tanh"};
    else
      defaults = {"Sigmoid", "Tanh", "Tanh"};
    acts_per_dir_ = static_cast<int>(defaults.size());
    activations_ = ParseActivations(info, defaults, num_dirs_);

    // Pre-pack constant float/half weights once.
    const Tensor* w = info.ConstantInput(1);
    const Tensor* r = info.ConstantInput(2);
    const bool b_ok = !info.has_input(3) || info.ConstantInput(3) != nullptr;
    const bool p_ok = kind != CellKind::kLstm || !info.has_input(7) || info.ConstantInput(7) != nullptr;
    if (w && r && b_ok && p_ok && w->dtype() != DataType::kDouble && w->dtype() == r->dtype()) {
      const Tensor* b = info.ConstantInput(3);
      const Tensor* p = kind == CellKind::kLstm ? info.ConstantInput(7) : nullptr;
      if (CheckWeightShapes(*w, *r, b, p).empty()) {
        TryDispatch(TypeList<float, Float16, BFloat16>{}, w->dtype(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          const linalg::PackSource source_w = linalg_kernels::PackSourceFor(info, 1);
          const linalg::PackSource source_r = linalg_kernels::PackSourceFor(info, 2);
          packed_ = PackWeights<T, float>(*w, *r, b, p, gates_, hidden_, &source_w, &source_r);
          packed_dtype_ = w->dtype();
        });
      }
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Dispatch(FloatTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      ComputeTyped<T>(ctx);
    });
  }

 private:
  // Empty when W, R, B, P agree with the attributes; otherwise what is wrong.
  std::string CheckWeightShapes(const Tensor& w, const Tensor& r, const Tensor* b, const Tensor* p) const {
    const int64_t gh = gates_ * hidden_;
    if (w.rank() != 3 || w.dim(0) != num_dirs_ || w.dim(1) != gh)
      return StrCat("W must be [", num_dirs_, ", ", gh, ", input_size], got ", w.Describe());
    if (r.rank() != 3 || r.dim(0) != num_dirs_ || r.dim(1) != gh || r.dim(2) != hidden_)
      return StrCat("R must be [", num_dirs_, ", ", gh, ", ", hidden_, "], got ", r.Describe());
    if (b && (b->rank() != 2 || b->dim(0) != num_dirs_ || b->dim(1) != 2 * gh))
      return StrCat("B must be [", num_dirs_, ", ", 2 * gh, "], got ", b->Describe());
    if (p && (p->rank() != 2 || p->dim(0) != num_dirs_ || p->dim(1) != 3 * hidden_))
      return StrCat("P must be [", num_dirs_, ", ", 3 * hidden_, "], got ", p->Describe());
    if (r.dtype() != w.dtype() || (b && b->dtype() != w.dtype()) || (p && p->dtype() != w.dtype()))
      return "W, R, B and P must share one element type";
    return "";
  }

  // Reads a [D, batch, H] (layout 0) or [batch, D, H] (layout 1) state into [D][batch][H].
  template <typename T, typename C>
  std::vector<C> ReadState(KernelContext& ctx, const Tensor* s, int64_t batch, const char* name) const {
    std::vector<C> out(static_cast<size_t>(num_dirs_ * batch * hidden_), C(0));
    if (s == nullptr) return out;
    if (s->dtype() != ctx.required_input(0).dtype()) ctx.Fail(StrCat(name, " must have the element type of X"));
    const Shape want = layout_ == 0 ? Shape{num_dirs_, batch, hidden_} : Shape{batch, num_dirs_, hidden_};
    if (s->shape() != want) ctx.Fail(StrCat(name, " must be ", ShapeToString(want), ", got ", s->Describe()));
    const T* sp = s->data<T>();
    for (int64_t d = 0; d < num_dirs_; ++d)
      for (int64_t b = 0; b < batch; ++b) {
        const int64_t src = layout_ == 0 ? (d * batch + b) : (b * num_dirs_ + d);
        compute::ToComputeArray(sp + src * hidden_, hidden_, out.data() + (d * batch + b) * hidden_);
      }
    return out;
  }

  template <typename T>
  void ComputeTyped(KernelContext& ctx) const {
    using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const Tensor& x = ctx.required_input(0);
    const Tensor& w = ctx.required_input(1);
    const Tensor& r = ctx.required_input(2);
    const Tensor* b = ctx.input(3);
    const Tensor* seq_lens = ctx.input(4);
    const Tensor* init_h = ctx.input(5);
    const Tensor* init_c = kind_ == CellKind::kLstm ? ctx.input(6) : nullptr;
    const Tensor* p = kind_ == CellKind::kLstm ? ctx.input(7) : nullptr;
    if (x.rank() != 3) ctx.Fail(StrCat("X must be rank 3, got ", x.Describe()));
    if (w.dtype() != x.dtype()) ctx.Fail("W must have the element type of X");
    const std::string bad = CheckWeightShapes(w, r, b, p);
    if (!bad.empty()) ctx.Fail(bad);
    const int64_t seq = layout_ == 0 ? x.dim(0) : x.dim(1);
    const int64_t batch = layout_ == 0 ? x.dim(1) : x.dim(0);
    const int64_t input = x.dim(2);
    if (w.dim(2) != input) ctx.Fail(StrCat("W's input size ", w.dim(2), " differs from X's ", input));
    const int64_t hid = hidden_, gh = gates_ * hidden_, dirs = num_dirs_;

    std::vector<int64_t> lens(static_cast<size_t>(batch), seq);
    if (seq_lens != nullptr) {
      if (seq_lens->rank() != 1 || seq_lens->dim(0) != batch)
        ctx.Fail(StrCat("sequence_lens must be [", batch, "], got ", seq_lens->Describe()));
      for (int64_t i = 0; i < batch; ++i) {
        if (seq_lens->dtype() == DataType::kInt32)
          lens[i] = seq_lens->data<int32_t>()[i];
        else if (seq_lens->dtype() == DataType::kInt64)
          lens[i] = seq_lens->data<int64_t>()[i];
        else
          ctx.Fail("sequence_lens must be int32");
        if (lens[i] < 0 || lens[i] > seq)
          ctx.Fail(StrCat("sequence_lens[", i, "] = ", lens[i], " is outside [0, ", seq, "]"));
      }
    }

    // X as [seq, batch, input] in the compute type.
    std::vector<C> xs(static_cast<size_t>(seq * batch * input));
    const T* xp = x.data<T>();
    for (int64_t t = 0; t < seq; ++t)
      for (int64_t bi = 0; bi < batch; ++bi) {
        const int64_t src = layout_ == 0 ? (t * batch + bi) : (bi * seq + t);
        compute::ToComputeArray(xp + src * input, input, xs.data() + (t * batch + bi) * input);
      }
    std::vector<C> h_state = ReadState<T, C>(ctx, init_h, batch, "initial_h");
    std::vector<C> c_state = ReadState<T, C>(ctx, init_c, batch, "initial_c");

    std::vector<DirectionWeights<C>> local;
    const std::vector<DirectionWeights<C>>* weights = &local;
    if constexpr (std::is_same_v<C, float>) {
      if (!packed_.empty() && packed_dtype_ == x.dtype()) weights = &packed_;
    }
    if (weights == &local) local = PackWeights<T, C>(w, r, b, p, gates_, hidden_);

    // Outputs: Y [seq, D, batch, H] (layout 0) or [batch, seq, D, H]; Y_h/Y_c [D, batch, H] or [batch, D, H].
    std::vector<C> y(static_cast<size_t>(seq * dirs * batch * hid), C(0));
    std::vector<C> xw(static_cast<size_t>(seq * batch * gh));
    std::vector<C> gates(static_cast<size_t>(batch * gh)), tmp(static_cast<size_t>(batch * gh));
    std::vector<C> h_new(static_cast<size_t>(batch * hid)), c_new(static_cast<size_t>(batch * hid));
    const int64_t max_len = batch == 0 ? 0 : *std::max_element(lens.begin(), lens.end());
    ThreadPool* pool = ctx.thread_pool();
    for (int64_t d = 0; d < dirs; ++d) {
      const DirectionWeights<C>& dw = (*weights)[d];
      const bool reverse = direction_ == 1 || d == 1;
      const Activation* act = activations_.data() + d * acts_per_dir_;
      C* h = h_state.data() + d * batch * hid;
      C* c = c_state.data() + d * batch * hid;
      compute::Gemm<C>(false, false, seq * batch, gh, input, C(1), xs.data(), input, dw.W(), gh, C(0), xw.data(),
                       gh, pool);
      for (int64_t s = 0; s < max_len; ++s) {
        for (int64_t bi = 0; bi < batch; ++bi) {
          if (s >= lens[bi]) continue;
          const int64_t t = reverse ? lens[bi] - 1 - s : s;
          const C* src = xw.data() + (t * batch + bi) * gh;
          C* dst = gates.data() + bi * gh;
          for (int64_t g = 0; g < gh; ++g) dst[g] = src[g] + dw.w_bias[g];
        }
        Step(dw, act, batch, h, c, gates.data(), tmp.data(), h_new.data(), c_new.data(), pool);
        for (int64_t bi = 0; bi < batch; ++bi) {
          if (s >= lens[bi]) continue;
          const int64_t t = reverse ? lens[bi] - 1 - s : s;
          std::memcpy(h + bi * hid, h_new.data() + bi * hid, sizeof(C) * hid);
          if (kind_ == CellKind::kLstm) std::memcpy(c + bi * hid, c_new.data() + bi * hid, sizeof(C) * hid);
          std::memcpy(y.data() + ((t * dirs + d) * batch + bi) * hid, h_new.data() + bi * hid, sizeof(C) * hid);
        }
      }
    }
    WriteOutputs<T, C>(ctx, y, h_state, c_state, seq, batch);
  }

  template <typename C>
  C Clip(C v) const {
    if (clip_ > 0.0f) return std::max(static_cast<C>(-clip_), std::min(static_cast<C>(clip_), v));
    return v;
  }

  // One time step for all batch rows: `gates` holds X*W^T + Wb on entry.
  template <typename C>
  void Step(const DirectionWeights<C>& dw, const Activation* act, int64_t batch, const C* h, const C* c, C* gates,
            C* tmp, C* h_new, C* c_new, ThreadPool* pool) const {
    const int64_t hid = hidden_, gh = gates_ * hidden_;
    if (kind_ == CellKind::kRnn) {
      compute::Gemm<C>(false, false, batch, gh, hid, C(1), h, hid, dw.R(), gh, C(1), gates, gh, pool);
      for (int64_t bi = 0; bi < batch; ++bi)
        for (int64_t j = 0; j < hid; ++j) h_new[bi * hid + j] = act[0](Clip(gates[bi * gh + j] + dw.r_bias[j]));
    } else if (kind_ == CellKind::kGru) {
      const Activation& f = act[0];
      const Activation& g = act[1];
      if (!linear_before_reset_) {
        // z and r from H*R^T; then the candidate from (r (.) H) * Rh^T.
        compute::Gemm<C>(false, false, batch, 2 * hid, hid, C(1), h, hid, dw.R(), gh, C(1), gates, gh, pool);
        for (int64_t bi = 0; bi < batch; ++bi)
          for (int64_t j = 0; j < hid; ++j) {
            const C rg = f(Clip(gates[bi * gh + hid + j] + dw.r_bias[hid + j]));
            tmp[bi * hid + j] = rg * h[bi * hid + j];
          }
        compute::Gemm<C>(false, false, batch, hid, hid, C(1), tmp, hid, dw.R() + 2 * hid, gh, C(1),
                         gates + 2 * hid, gh, pool);
        for (int64_t bi = 0; bi < batch; ++bi)
          for (int64_t j = 0; j < hid; ++j) {
            const C z = f(Clip(gates[bi * gh + j] + dw.r_bias[j]));
            const C hh = g(Clip(gates[bi * gh + 2 * hid + j] + dw.r_bias[2 * hid + j]));
            h_new[bi * hid + j] = (C(1) - z) * hh + z * h[bi * hid + j];
          }
      } else {
        compute::Gemm<C>(false, false, batch, gh, hid, C(1), h, hid, dw.R(), gh, C(0), tmp, gh, pool);
        for (int64_t bi = 0; bi < batch; ++bi)
          for (int64_t j = 0; j < hid; ++j) {
            const C* hr = tmp + bi * gh;
            const C* xg = gates + bi * gh;
            const C z = f(Clip(xg[j] + hr[j] + dw.r_bias[j]));
            const C rg = f(Clip(xg[hid + j] + hr[hid + j] + dw.r_bias[hid + j]));
            const C hh = g(Clip(xg[2 * hid + j] + rg * (hr[2 * hid + j] + dw.r_bias[2 * hid + j])));
            h_new[bi * hid + j] = (C(1) - z) * hh + z * h[bi * hid + j];
          }
      }
    } else {
      // Gate blocks in W/R/B: i, o, f, c. Peepholes: i, o, f.
      const Activation& f = act[0];
      const Activation& g = act[1];
      const Activation& hact = act[2];
      compute::Gemm<C>(false, false, batch, gh, hid, C(1), h, hid, dw.R(), gh, C(1), gates, gh, pool);
      const C* pi = dw.peep.data();
      const C* po = pi + hid;
      const C* pf = pi + 2 * hid;
      for (int64_t bi = 0; bi < batch; ++bi)
        for (int64_t j = 0; j < hid; ++j) {
          const C* gr = gates + bi * gh;
          const C* rb = dw.r_bias.data();
          const C cp = c[bi * hid + j];
          const C ig = f(Clip(gr[j] + rb[j] + pi[j] * cp));
          const C fg = input_forget_ ? C(1) - ig : f(Clip(gr[2 * hid + j] + rb[2 * hid + j] + pf[j] * cp));
          const C cc = g(Clip(gr[3 * hid + j] + rb[3 * hid + j]));
          const C cn = fg * cp + ig * cc;
          const C og = f(Clip(gr[hid + j] + rb[hid + j] + po[j] * cn));
          c_new[bi * hid + j] = cn;
          h_new[bi * hid + j] = og * hact(cn);
        }
    }
  }

  template <typename T, typename C>
  void WriteOutputs(KernelContext& ctx, const std::vector<C>& y, const std::vector<C>& h_state,
                    const std::vector<C>& c_state, int64_t seq, int64_t batch) const {
    const int64_t hid = hidden_, dirs = num_dirs_;
    const DataType dt = ctx.required_input(0).dtype();
    if (ctx.has_output(0)) {
      const Shape shape = layout_ == 0 ? Shape{seq, dirs, batch, hid} : Shape{batch, seq, dirs, hid};
      T* out = ctx.AllocateOutput(0, dt, shape).template data<T>();
      for (int64_t t = 0; t < seq; ++t)
        for (int64_t d = 0; d < dirs; ++d)
          for (int64_t bi = 0; bi < batch; ++bi) {
            const int64_t dst = layout_ == 0 ? ((t * dirs + d) * batch + bi) : ((bi * seq + t) * dirs + d);
            compute::FromComputeArray(y.data() + ((t * dirs + d) * batch + bi) * hid, hid, out + dst * hid);
          }
    }
    auto write_state = [&](size_t index, const std::vector<C>& st) {
      if (!ctx.has_output(index)) return;
      const Shape shape = layout_ == 0 ? Shape{dirs, batch, hid} : Shape{batch, dirs, hid};
      T* out = ctx.AllocateOutput(index, dt, shape).template data<T>();
      for (int64_t d = 0; d < dirs; ++d)
        for (int64_t bi = 0; bi < batch; ++bi) {
          const int64_t dst = layout_ == 0 ? (d * batch + bi) : (bi * dirs + d);
          compute::FromComputeArray(st.data() + (d * batch + bi) * hid, hid, out + dst * hid);
        }
    };
    write_state(1, h_state);
    if (kind_ == CellKind::kLstm) write_state(2, c_state);
  }

  CellKind kind_;
  int64_t gates_ = 1;
  int64_t hidden_ = 0;
  int direction_ = 0;  // 0 forward, 1 reverse, 2 bidirectional
  int64_t num_dirs_ = 1;
  float clip_ = 0.0f;  // 0: no clipping
  int64_t layout_ = 0;
  bool linear_before_reset_ = false;
  bool input_forget_ = false;
  int acts_per_dir_ = 1;
  std::vector<Activation> activations_;
  std::vector<DirectionWeights<float>> packed_;  // constant float/half weights, pre-packed
  DataType packed_dtype_ = DataType::kUndefined;
};

template <CellKind kKind>
class RecurrentOp final : public OpKernel {
 public:
  explicit RecurrentOp(const KernelInfo& info) : impl_(info, kKind) {}
  void Compute(KernelContext& ctx) const override { impl_.Compute(ctx); }

 private:
  Recurrent impl_;
};

using RnnOp = RecurrentOp<CellKind::kRnn>;
using GruOp = RecurrentOp<CellKind::kGru>;
using LstmOp = RecurrentOp<CellKind::kLstm>;

// Opset 1 carries output_sequence (Y is optional either way); 7 drops it; 14 adds layout;
// 22 adds bfloat16. GRU-3 adds linear_before_reset.
ONYX_CPU_KERNEL("RNN", 1, 6, RnnOp);
ONYX_CPU_KERNEL("RNN", 7, 13, RnnOp);
ONYX_CPU_KERNEL("RNN", 14, 21, RnnOp);
ONYX_CPU_KERNEL("RNN", 22, kOpsetMax, RnnOp);
ONYX_CPU_KERNEL("GRU", 1, 2, GruOp);
ONYX_CPU_KERNEL("GRU", 3, 6, GruOp);
ONYX_CPU_KERNEL("GRU", 7, 13, GruOp);
ONYX_CPU_KERNEL("GRU", 14, 21, GruOp);
ONYX_CPU_KERNEL("GRU", 22, kOpsetMax, GruOp);
ONYX_CPU_KERNEL("LSTM", 1, 6, LstmOp);
ONYX_CPU_KERNEL("LSTM", 7, 13, LstmOp);
ONYX_CPU_KERNEL("LSTM", 14, 21, LstmOp);
ONYX_CPU_KERNEL("LSTM", 22, kOpsetMax, LstmOp);

}  // namespace
}  // namespace onyx
