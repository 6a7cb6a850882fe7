// Layer normalizations ONNX Runtime registers as contrib ops:
//   com.microsoft SkipLayerNormalization(input, skip, gamma, beta?, bias?) and
//   SkipSimplifiedLayerNormalization(input, skip, gamma, bias?): sum = input + skip (+ bias),
//   normalized over the last axis; outputs (Y, mean?, inv_std_var?, input_skip_bias_sum?).
//   ai.onnx SimplifiedLayerNormalization (RMS norm, opset 1+) and LayerNormalization opsets
//   1-16 (ONNX Runtime's pre-standard contrib form, kept in the ai.onnx domain).
// Each row is read once to accumulate sum and sum of squares (the variance is
// E[x^2] - mean^2, as ONNX Runtime computes it) and written once. float rows run on linalg's
// vector kernels (the sum by VecBinary, the statistics accumulated in double by LayerNormRow /
// RmsNormRow); float16/bfloat16 compute in float, double in double.
#include <algorithm>
#include <cmath>
#include <vector>

#include "base/type_traits.h"
#include "linalg/vector_math.h"
#include "ops/broadcast.h"
#include "platform/thread_pool.h"
#include "providers/kernel.h"

namespace onyx::contrib {
namespace {

// Float copies of a small parameter vector (gamma, beta, bias) in compute type C.
template <typename T, typename C = ComputeType<T>>
std::vector<C> ParamVector(const Tensor* t) {
  if (t == nullptr) return {};
  std::vector<C> v(static_cast<size_t>(t->size()));
  for (int64_t i = 0; i < t->size(); ++i) v[i] = static_cast<C>(ToCompute(t->data<T>()[i]));
  return v;
}

struct RowStats {
  float mean = 0.0f;
  float inv_std = 0.0f;
};

// One row: s = x (+ skip) (+ bias); y = (s - mean) * inv_std * gamma (+ beta), or for the
// simplified form y = s * inv_rms * gamma.
template <typename T, typename C>
RowStats NormalizeRow(const T* x, const T* skip, const C* bias, const C* gamma, const C* beta, T* y, T* sum_out,
                      int64_t n, C epsilon, bool simplified, C* work) {
  C sum = 0, sum_sq = 0;
  for (int64_t i = 0; i < n; ++i) {
    C v = ToCompute(x[i]);
    if (skip) v += ToCompute(skip[i]);
    if (bias) v += bias[i];
    if (sum_out) sum_out[i] = FromCompute<T>(v);
    work[i] = v;
    sum += v;
    sum_sq += v * v;
  }
  const C mean = simplified ? C(0) : sum / static_cast<C>(n);
  const C var = sum_sq / static_cast<C>(n) - mean * mean;
  const C inv_std = C(1) / std::sqrt(std::max(var, C(0)) + epsilon);
  for (int64_t i = 0; i < n; ++i) {
    C v = (work[i] - mean) * inv_std * gamma[i];
    if (beta) v += beta[i];
    y[i] = FromCompute<T>(v);
  }
  return {static_cast<float>(mean), static_cast<float>(inv_std)};
}

// The float row on the vector kernels: s = x (+ skip) (+ bias) into `work` (the sum output when
// there is one), then normalized from it.
RowStats NormalizeRowF32(const float* x, const float* skip, const float* bias, const float* gamma, const float* beta,
                         float* y, float* sum_out, int64_t n, float epsilon, bool simplified, float* work) {
  const size_t count = static_cast<size_t>(n);
  const float* s = x;
  if (skip != nullptr || bias != nullptr) {
    float* const dst = sum_out != nullptr ? sum_out : work;
    if (skip != nullptr) linalg::VecBinary(linalg::BinaryOp::kAdd, x, skip, dst, count);
    if (bias != nullptr) linalg::VecBinary(linalg::BinaryOp::kAdd, skip != nullptr ? dst : x, bias, dst, count);
    s = dst;
  } else if (sum_out != nullptr) {
    std::copy(x, x + n, sum_out);
  }
  RowStats st;
  if (simplified)
    linalg::RmsNormRow(s, y, count, gamma, epsilon, &st.inv_std);
  else
    linalg::LayerNormRow(s, y, count, gamma, beta, epsilon, &st.mean, &st.inv_std);
  return st;
}

constexpr double kRowCostPerElement = 6.0;
constexpr double kVecRowCostPerElement = 1.0;

// SkipLayerNormalization and SkipSimplifiedLayerNormalization.
class SkipLayerNorm final : public OpKernel {
 public:
  SkipLayerNorm(const KernelInfo& info, bool simplified)
      : simplified_(simplified), epsilon_(info.GetFloatOr("epsilon", 1e-12f)) {
    if (epsilon_ < 0) info.Fail(StrCat("attribute 'epsilon' must be >= 0, got ", epsilon_));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& input = ctx.required_input(0);
    const Tensor& skip = ctx.required_input(1);
    const Tensor& gamma = ctx.required_input(2);
    const Tensor* beta = simplified_ ? nullptr : ctx.input(3);
    const Tensor* bias = ctx.input(simplified_ ? 3 : 4);
    if (input.rank() < 2 || input.rank() > 3) ctx.Fail("input must be 2-D or 3-D");
    const int64_t H = input.shape().back();
    for (const Tensor* t : {&skip, &gamma, beta, bias})
      if (t && t->dtype() != input.dtype()) ctx.Fail("all inputs must have the input's element type");
    // skip: the input's shape, or (1, S, H) / (S, H) broadcast over the batch.
    const Shape& is = input.shape();
    const Shape& ss = skip.shape();
    const bool same = ss == is;
    const bool batch_bcast = is.size() == 3 && ((ss.size() == 3 && ss[0] == 1 && ss[1] == is[1] && ss[2] == H) ||
                                                (ss.size() == 2 && ss[0] == is[1] && ss[1] == H));
    if (!same && !batch_bcast)
      ctx.Fail(StrCat("skip shape ", ShapeToString(ss), " must equal the input's ", ShapeToString(is),
                      " or be (1, S, H) / (S, H)"));
    for (const Tensor* t : {&gamma, beta, bias})
      if (t && (t->rank() != 1 || t->dim(0) != H))
        ctx.Fail(StrCat("gamma, beta and bias must be 1-D of size ", H));
    Tensor& y = ctx.AllocateOutput(0, input.dtype(), is);
    Shape stat_shape(is.begin(), is.end() - 1);
    stat_shape.push_back(1);
    Tensor* mean = ctx.has_output(1) ? &ctx.AllocateOutput(1, DataType::kFloat, stat_shape) : nullptr;
    Tensor* inv_std = ctx.has_output(2) ? &ctx.AllocateOutput(2, DataType::kFloat, stat_shape) : nullptr;
    Tensor* sum = ctx.has_output(3) ? &ctx.AllocateOutput(3, input.dtype(), is) : nullptr;
    const int64_t rows = H == 0 ? 0 : input.size() / H;
    const int64_t skip_size = skip.size();
    if (input.dtype() == DataType::kFloat) {
      auto data = [](const Tensor* t) { return t != nullptr ? t->data<float>() : nullptr; };
      ThreadPool::For(ctx.thread_pool(), rows, H * kVecRowCostPerElement, [&](int64_t begin, int64_t end) {
        std::vector<float> work(static_cast<size_t>(H));
        for (int64_t r = begin; r < end; ++r) {
          const int64_t off = r * H;
          const RowStats st = NormalizeRowF32(input.data<float>() + off, skip.data<float>() + off % skip_size,
                                              data(bias), gamma.data<float>(), data(beta), y.data<float>() + off,
                                              sum ? sum->data<float>() + off : nullptr, H, epsilon_, simplified_,
                                              work.data());
          if (mean) mean->data<float>()[r] = st.mean;
          if (inv_std) inv_std->data<float>()[r] = st.inv_std;
        }
      });
      return;
    }
    Dispatch(FloatTypes{}, input.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      const std::vector<C> g = ParamVector<T>(&gamma), bt = ParamVector<T>(beta), bs = ParamVector<T>(bias);
      ThreadPool::For(ctx.thread_pool(), rows, H * kRowCostPerElement, [&](int64_t begin, int64_t end) {
        std::vector<C> work(static_cast<size_t>(H));
        for (int64_t r = begin; r < end; ++r) {
          const int64_t off = r * H;
          const RowStats st = NormalizeRow<T, C>(
              input.data<T>() + off, skip.data<T>() + off % skip_size, bs.empty() ? nullptr : bs.data(), g.data(),
              bt.empty() ? nullptr : bt.data(), y.data<T>() + off, sum ? sum->data<T>() + off : nullptr, H,
              static_cast<C>(epsilon_), simplified_, work.data());
          if (mean) mean->data<float>()[r] = st.mean;
          if (inv_std) inv_std->data<float>()[r] = st.inv_std;
        }
      });
    });
  }

 private:
  bool simplified_;
  float epsilon_;
};

// ai.onnx LayerNormalization opsets 1-16 (contrib form) and SimplifiedLayerNormalization:
// normalize over axes [axis, rank); Mean / InvStdDev outputs keep the leading dims with 1s after.
class LayerNorm final : public OpKernel {
 public:
  LayerNorm(const KernelInfo& info, bool simplified)
      : simplified_(simplified),
        axis_(info.GetIntOr("axis", -1)),
        epsilon_(info.GetFloatOr("epsilon", 1e-5f)) {
    if (epsilon_ < 0) info.Fail(StrCat("attribute 'epsilon' must be >= 0, got ", epsilon_));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& scale = ctx.required_input(1);
    const Tensor* bias = simplified_ ? nullptr : ctx.input(2);
    if (x.rank() == 0) ctx.Fail("input X must have rank >= 1");
    const int64_t axis = NormalizeAxis(axis_, static_cast<int64_t>(x.rank()));
    const Shape& xs = x.shape();
    int64_t n = 1;
    for (size_t d = static_cast<size_t>(axis); d < xs.size(); ++d) n *= xs[d];
    for (const Tensor* t : {&scale, bias}) {
      if (!t) continue;
      if (t->dtype() != x.dtype()) ctx.Fail("Scale and B must have X's element type");
      if (t->size() != n)
        ctx.Fail(StrCat("Scale and B must hold ", n, " values (the normalized shape), got ", t->size()));
    }
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), xs);
    Shape stat_shape(xs.begin(), xs.begin() + axis);
    stat_shape.resize(xs.size(), 1);
    // Mean and InvStdDev are float whatever X's type, as in ONNX Runtime's contrib kernels.
    const DataType stat_type = DataType::kFloat;
    const size_t inv_index = simplified_ ? 1 : 2;
    Tensor* mean = !simplified_ && ctx.has_output(1) ? &ctx.AllocateOutput(1, stat_type, stat_shape) : nullptr;
    Tensor* inv_std = ctx.has_output(inv_index) ? &ctx.AllocateOutput(inv_index, stat_type, stat_shape) : nullptr;
    const int64_t rows = n == 0 ? 0 : x.size() / n;
    if (x.dtype() == DataType::kFloat) {
      const float* b = bias != nullptr ? bias->data<float>() : nullptr;
      ThreadPool::For(ctx.thread_pool(), rows, n * kVecRowCostPerElement, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const RowStats st = NormalizeRowF32(x.data<float>() + r * n, nullptr, nullptr, scale.data<float>(), b,
                                              y.data<float>() + r * n, nullptr, n, epsilon_, simplified_, nullptr);
          if (mean) mean->data<float>()[r] = st.mean;
          if (inv_std) inv_std->data<float>()[r] = st.inv_std;
        }
      });
      return;
    }
    Dispatch(FloatTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      const std::vector<C> g = ParamVector<T>(&scale), b = ParamVector<T>(bias);
      ThreadPool::For(ctx.thread_pool(), rows, n * kRowCostPerElement, [&](int64_t begin, int64_t end) {
        std::vector<C> work(static_cast<size_t>(n));
        for (int64_t r = begin; r < end; ++r) {
          const RowStats st = NormalizeRow<T, C>(x.data<T>() + r * n, nullptr, nullptr, g.data(),
                                                 b.empty() ? nullptr : b.data(), y.data<T>() + r * n, nullptr, n,
                                                 static_cast<C>(epsilon_), simplified_, work.data());
          if (mean) mean->data<float>()[r] = st.mean;
          if (inv_std) inv_std->data<float>()[r] = st.inv_std;
        }
      });
    });
  }

 private:
  bool simplified_;
  int64_t axis_;
  float epsilon_;
};

ONYX_REGISTER_KERNEL_FN("CPU", "com.microsoft", "SkipLayerNormalization", 1, kOpsetMax,
                        [](const KernelInfo& info) -> std::unique_ptr<OpKernel> {
                          return std::make_unique<SkipLayerNorm>(info, false);
                        });
ONYX_REGISTER_KERNEL_FN("CPU", "com.microsoft", "SkipSimplifiedLayerNormalization", 1, kOpsetMax,
                        [](const KernelInfo& info) -> std::unique_ptr<OpKernel> {
                          return std::make_unique<SkipLayerNorm>(info, true);
                        });
ONYX_REGISTER_KERNEL_FN("CPU", "", "SimplifiedLayerNormalization", 1, kOpsetMax,
                        [](const KernelInfo& info) -> std::unique_ptr<OpKernel> {
                          return std::make_unique<LayerNorm>(info, true);
                        });
ONYX_REGISTER_KERNEL_FN("CPU", "", "LayerNormalization", 1, 16, [](const KernelInfo& info) -> std::unique_ptr<OpKernel> {
  return std::make_unique<LayerNorm>(info, false);
});

}  // namespace
}  // namespace onyx::contrib
