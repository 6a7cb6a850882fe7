// com.microsoft pointwise fusions of transformer MLPs:
//   Gelu(X)            0.5 x (1 + erf(x / sqrt(2)))
//   BiasGelu(A, B)     Gelu(A + B), B 1-D along the last axis
//   FastGelu(X, bias?) 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), bias along the last axis
//   QuickGelu(X)       x * sigmoid(alpha x), alpha default 1.702
//   BiasAdd(X, bias, skip)  X + bias + skip with X, skip (N, S, C) and bias (C)
// float16/bfloat16 compute in float and round once; double computes in double (libm).
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "base/type_traits.h"
#include "linalg/vector_math.h"
#include "platform/thread_pool.h"
#include "providers/kernel.h"
#include "providers/cpu/kernels/contrib/vector_math.h"

namespace onyx::contrib {
namespace {

constexpr double kPointwiseCost = 24.0;
constexpr int64_t kBlock = 4096;

// The activations in compute type C: float uses the vectorizable approximations of
// vector_math.h, double the libm functions.
template <typename C>
inline C GeluErf(C x) {
  if constexpr (std::is_same_v<C, float>) return 0.5f * x * (1.0f + vmath::Erf(x * 0.70710678118654752440f));
  else return C(0.5) * x * (C(1) + std::erf(x * static_cast<C>(0.70710678118654752440)));
}
template <typename C>
inline C GeluTanh(C x) {
  const C inner = static_cast<C>(0.7978845608028654) * (x + static_cast<C>(0.044715) * x * x * x);
  if constexpr (std::is_same_v<C, float>) return 0.5f * x * (1.0f + vmath::Tanh(inner));
  else return C(0.5) * x * (C(1) + std::tanh(inner));
}
template <typename C>
inline C QuickGeluOf(C x, C alpha) {
  if constexpr (std::is_same_v<C, float>) {
    return x * vmath::Logistic(alpha * x);
  } else {
    const C z = alpha * x;
    return x * (z >= C(0) ? C(1) / (C(1) + std::exp(-z)) : std::exp(z) / (C(1) + std::exp(z)));
  }
}

enum class Kind { kGelu, kBiasGelu, kFastGelu, kQuickGelu };

// y = f(x (+ bias along the last axis)), in blocks over the thread pool. With a bias the work
// is split in whole rows so that the inner loop is a plain vectorizable run.
template <typename T, typename F>
void MapWithBias(ThreadPool* pool, const T* x, const T* bias, int64_t bias_size, T* y, int64_t n, F f) {
  using C = ComputeType<T>;
  if (!bias) {
    const int64_t blocks = (n + kBlock - 1) / kBlock;
    ThreadPool::For(pool, blocks, kBlock * kPointwiseCost, [&](int64_t begin, int64_t end) {
      for (int64_t blk = begin; blk < end; ++blk) {
        const int64_t lo = blk * kBlock, hi = std::min(n, lo + kBlock);
        for (int64_t i = lo; i < hi; ++i) y[i] = FromCompute<T>(f(ToCompute(x[i])));
      }
    });
    return;
  }
  std::vector<C> b(static_cast<size_t>(bias_size));
  for (int64_t i = 0; i < bias_size; ++i) b[i] = ToCompute(bias[i]);
  const int64_t rows = n / bias_size;
  ThreadPool::For(pool, rows, bias_size * kPointwiseCost, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T* xr = x + r * bias_size;
      T* yr = y + r * bias_size;
      for (int64_t i = 0; i < bias_size; ++i) yr[i] = FromCompute<T>(f(ToCompute(xr[i]) + b[i]));
    }
  });
}

class GeluFamily final : public OpKernel {
 public:
  GeluFamily(const KernelInfo& info, Kind kind) : kind_(kind), alpha_(info.GetFloatOr("alpha", 1.702f)) {}
  // Row by row: the bias add reads a row of x before writing it, GELU then runs in place.
  uint32_t InPlaceInputsFor(size_t output) const override { return output == 0 ? 1u : 0u; }  // pointwise

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor* bias = kind_ == Kind::kBiasGelu ? &ctx.required_input(1) : (kind_ == Kind::kFastGelu ? ctx.input(1) : nullptr);
    if (bias) {
      if (bias->dtype() != x.dtype()) ctx.Fail("bias must have the input's element type");
      if (x.rank() == 0 || bias->rank() != 1 || bias->dim(0) != x.shape().back())
        ctx.Fail(StrCat("bias must be 1-D with the input's last dimension (",
                        x.rank() ? x.shape().back() : 0, ")"));
    }
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.shape());
    if (x.size() == 0) return;
    if (x.dtype() == DataType::kFloat && kind_ != Kind::kQuickGelu)
      return GeluFloat(ctx, x.data<float>(), bias ? bias->data<float>() : nullptr, y.data<float>(), x.size(),
                       bias ? bias->size() : 0);
    Dispatch(FloatTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      const T* b = bias ? bias->data<T>() : nullptr;
      const int64_t bs = bias ? bias->size() : 0;
      switch (kind_) {
        case Kind::kGelu:
        case Kind::kBiasGelu:
          MapWithBias(ctx.thread_pool(), x.data<T>(), b, bs, y.data<T>(), x.size(), [](C v) { return GeluErf(v); });
          break;
        case Kind::kFastGelu:
          MapWithBias(ctx.thread_pool(), x.data<T>(), b, bs, y.data<T>(), x.size(), [](C v) { return GeluTanh(v); });
          break;
        case Kind::kQuickGelu: {
          const C alpha = static_cast<C>(alpha_);
          MapWithBias(ctx.thread_pool(), x.data<T>(), b, bs, y.data<T>(), x.size(),
                      [alpha](C v) { return QuickGeluOf(v, alpha); });
          break;
        }
      }
    });
  }

 private:
  // float Gelu / BiasGelu / FastGelu on the SIMD row kernels of linalg: the bias is added to a
  // row, then GELU runs over it in place while it is in L1.
  void GeluFloat(KernelContext& ctx, const float* x, const float* bias, float* y, int64_t n, int64_t bias_size) const {
    const bool erf = kind_ != Kind::kFastGelu;
    const int64_t row = bias ? bias_size : std::min<int64_t>(n, kBlock);
    const int64_t rows = (n + row - 1) / row;
    ThreadPool::For(ctx.thread_pool(), rows, static_cast<double>(row) * kPointwiseCost, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t lo = r * row, count = std::min(row, n - lo);
        const float* src = x + lo;
        if (bias) {
          linalg::VecBinary(linalg::BinaryOp::kAdd, x + lo, bias, y + lo, static_cast<size_t>(count));
          src = y + lo;
        }
        if (erf)
          linalg::VecGeluErf(src, y + lo, static_cast<size_t>(count));
        else
          linalg::VecGeluTanh(src, y + lo, static_cast<size_t>(count));
      }
    });
  }

  Kind kind_;
  float alpha_;
};

class BiasAdd final : public OpKernel {
 public:
  explicit BiasAdd(const KernelInfo&) {}
  uint32_t InPlaceInputsFor(size_t output) const override { return output == 0 ? 5u : 0u; }  // x or skip

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& bias = ctx.required_input(1);
    const Tensor& skip = ctx.required_input(2);
    if (x.rank() != 3) ctx.Fail("input X must be 3-D (N, S, C)");
    if (bias.rank() != 1 || bias.dim(0) != x.dim(2)) ctx.Fail(StrCat("bias must be 1-D of size ", x.dim(2)));
    if (skip.shape() != x.shape()) ctx.Fail("skip must have X's shape");
    if (bias.dtype() != x.dtype() || skip.dtype() != x.dtype()) ctx.Fail("inputs must share one element type");
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.shape());
    const int64_t C = x.dim(2), rows = C == 0 ? 0 : x.size() / C;
    Dispatch(FloatTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* xd = x.data<T>();
      const T* bd = bias.data<T>();
      const T* sd = skip.data<T>();
      T* yd = y.data<T>();
      ThreadPool::For(ctx.thread_pool(), rows, 2.0 * C, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r)
          for (int64_t c = 0; c < C; ++c) {
            const int64_t i = r * C + c;
            yd[i] = FromCompute<T>(ToCompute(xd[i]) + ToCompute(bd[c]) + ToCompute(sd[i]));
          }
      });
    });
  }
};

std::unique_ptr<OpKernel> Make(const KernelInfo& info, Kind kind) { return std::make_unique<GeluFamily>(info, kind); }

ONYX_REGISTER_KERNEL_FN("CPU", "com.microsoft", "Gelu", 1, kOpsetMax,
                        [](const KernelInfo& info) { return Make(info, Kind::kGelu); });
ONYX_REGISTER_KERNEL_FN("CPU", "com.microsoft", "BiasGelu", 1, kOpsetMax,
                        [](const KernelInfo& info) { return Make(info, Kind::kBiasGelu); });
ONYX_REGISTER_KERNEL_FN("CPU", "com.microsoft", "FastGelu", 1, kOpsetMax,
                        [](const KernelInfo& info) { return Make(info, Kind::kFastGelu); });
ONYX_REGISTER_KERNEL_FN("CPU", "com.microsoft", "QuickGelu", 1, kOpsetMax,
                        [](const KernelInfo& info) { return Make(info, Kind::kQuickGelu); });
ONYX_REGISTER_KERNEL("CPU", "com.microsoft", "BiasAdd", 1, kOpsetMax, BiasAdd);

}  // namespace
}  // namespace onyx::contrib
