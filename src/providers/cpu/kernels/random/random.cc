// Random generators: RandomUniform, RandomNormal, RandomUniformLike, RandomNormalLike (1; 22
// adds bfloat16), Bernoulli (15; 22 widens types), Multinomial (7; 22 widens types).
// With a `seed` attribute the stream is fixed: every Run of the node gives the same values.
// Without one, each Run draws a fresh seed. The stream is our own (mt19937_64 mapped to
// [0, 1) with 53 bits; normals by Box-Muller), so values differ from numpy's or ONNX Runtime's
// generators even for the same seed: ONNX does not specify the generator.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "base/type_traits.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

using RandomOutTypes = TypeList<float, double, Float16, BFloat16>;

class Stream {
 public:
  explicit Stream(uint64_t seed) : engine_(seed) {}
  double Uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }  // [0, 1)
  double Normal() {
    const double u1 = 1.0 - Uniform();  // (0, 1]: log stays finite
    const double u2 = Uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.14159265358979323846 * u2);
  }

 private:
  std::mt19937_64 engine_;
};

// The seed attribute (a float) or nothing.
struct SeedSpec {
  bool fixed = false;
  uint64_t value = 0;
  explicit SeedSpec(const KernelInfo& info) {
    if (!info.HasAttr("seed")) return;
    fixed = true;
    const float f = info.GetFloat("seed");
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof(bits));
    value = 0x9E3779B97F4A7C15ull ^ bits;
  }
  uint64_t Draw() const {
    if (fixed) return value;
    std::random_device rd;
    return (static_cast<uint64_t>(rd()) << 32) ^ rd();
  }
};

DataType ParseDType(const KernelInfo& info, DataType fallback, bool allow_bf16) {
  if (!info.HasAttr("dtype")) return fallback;
  const int64_t raw = info.GetInt("dtype");
  const auto dt = static_cast<DataType>(raw);
  const bool ok = dt == DataType::kFloat || dt == DataType::kDouble || dt == DataType::kFloat16 ||
                  (allow_bf16 && dt == DataType::kBFloat16);
  if (!ok) info.Fail(StrCat("dtype ", raw, " is not a floating-point type this opset allows"));
  return dt;
}

enum class Distribution { kUniform, kNormal };

// RandomUniform / RandomNormal (shape attribute) and their *Like forms (shape of the input).
template <Distribution kDist, bool kLike>
class RandomTensor final : public OpKernel {
 public:
  explicit RandomTensor(const KernelInfo& info) : seed_(info) {
    allow_bf16_ = info.opset() >= 22;
    if (kDist == Distribution::kUniform) {
      a_ = info.GetFloatOr("low", 0.0f);
      b_ = info.GetFloatOr("high", 1.0f);
    } else {
      a_ = info.GetFloatOr("mean", 0.0f);
      b_ = info.GetFloatOr("scale", 1.0f);
    }
    dtype_ = ParseDType(info, kLike ? DataType::kUndefined : DataType::kFloat, allow_bf16_);
    if (!kLike) {
      shape_ = info.GetInts("shape");
      for (int64_t d : shape_)
        if (d < 0) info.Fail(StrCat("shape ", ShapeToString(shape_), " has a negative dimension"));
    }
  }

  void Compute(KernelContext& ctx) const override {
    Shape shape = shape_;
    DataType dt = dtype_;
    if (kLike) {
      const Tensor& x = ctx.required_input(0);
      shape = x.shape();
      if (dt == DataType::kUndefined) {
        dt = x.dtype();
        if (!IsFloatingPoint(dt) || (dt == DataType::kBFloat16 && !allow_bf16_) || DataTypeBits(dt) < 16)
          ctx.Fail(StrCat("without dtype the output takes the input's type, which must be floating point, got ",
                          DataTypeName(dt)));
      }
    }
    Tensor& out = ctx.AllocateOutput(0, dt, shape);
    Stream stream(seed_.Draw());
    Dispatch(RandomOutTypes{}, dt, ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* p = out.data<T>();
      for (int64_t i = 0; i < out.size(); ++i) {
        const double v =
            kDist == Distribution::kUniform ? a_ + (b_ - a_) * stream.Uniform() : a_ + b_ * stream.Normal();
        p[i] = FromCompute<T>(static_cast<ComputeType<T>>(v));
      }
    });
  }

 private:
  SeedSpec seed_;
  bool allow_bf16_ = false;
  double a_ = 0.0, b_ = 1.0;
  DataType dtype_ = DataType::kFloat;
  Shape shape_;
};

using BernoulliOutTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                                   uint16_t, uint32_t, uint64_t, bool>;

// Bernoulli: 1 with probability p (the input), else 0.
class Bernoulli final : public OpKernel {
 public:
  explicit Bernoulli(const KernelInfo& info) : seed_(info) {
    if (info.HasAttr("dtype")) {
      const int64_t raw = info.GetInt("dtype");
      dtype_ = static_cast<DataType>(raw);
      if (!IsValidDataType(static_cast<int32_t>(raw)) || !TryDispatch(BernoulliOutTypes{}, dtype_, [](auto) {}))
        info.Fail(StrCat("dtype ", raw, " is not a supported output type"));
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const DataType out_type = dtype_ == DataType::kUndefined ? x.dtype() : dtype_;
    Tensor& out = ctx.AllocateOutput(0, out_type, x.shape());
    std::vector<double> p(static_cast<size_t>(x.size()));
    Dispatch(FloatTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      for (int64_t i = 0; i < x.size(); ++i) p[i] = static_cast<double>(ToCompute(x.data<T>()[i]));
    });
    for (double v : p)
      if (!(v >= 0.0 && v <= 1.0)) ctx.Fail(StrCat("probability ", v, " is outside [0, 1]"));
    Stream stream(seed_.Draw());
    Dispatch(BernoulliOutTypes{}, out_type, ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* o = out.data<T>();
      for (int64_t i = 0; i < x.size(); ++i) {
        const bool one = stream.Uniform() < p[i];
        if constexpr (std::is_same_v<T, bool>) o[i] = one;
        else o[i] = FromCompute<T>(static_cast<ComputeType<T>>(one ? 1 : 0));
      }
    });
  }

 private:
  SeedSpec seed_;
  DataType dtype_ = DataType::kUndefined;
};

// Multinomial: sample_size draws per row from the categorical distribution whose unnormalized
// log-probabilities are the row.
class Multinomial final : public OpKernel {
 public:
  explicit Multinomial(const KernelInfo& info) : seed_(info) {
    sample_size_ = info.GetIntOr("sample_size", 1);
    if (sample_size_ < 0) info.Fail(StrCat("sample_size must not be negative, got ", sample_size_));
    const int64_t raw = info.GetIntOr("dtype", static_cast<int64_t>(DataType::kInt32));
    dtype_ = static_cast<DataType>(raw);
    if (dtype_ != DataType::kInt32 && dtype_ != DataType::kInt64) info.Fail("dtype must be int32 or int64");
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    if (x.rank() != 2) ctx.Fail("the input must be [batch_size, class_size]");
    const int64_t batch = x.dim(0), classes = x.dim(1);
    if (classes == 0 && sample_size_ > 0 && batch > 0) ctx.Fail("cannot sample from zero classes");
    std::vector<double> logits(static_cast<size_t>(x.size()));
    Dispatch(FloatTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      for (int64_t i = 0; i < x.size(); ++i) logits[i] = static_cast<double>(ToCompute(x.data<T>()[i]));
    });
    Tensor& out = ctx.AllocateOutput(0, dtype_, {batch, sample_size_});
    Stream stream(seed_.Draw());
    std::vector<double> cdf(static_cast<size_t>(classes));
    for (int64_t b = 0; b < batch; ++b) {
      const double* row = logits.data() + b * classes;
      double max = -INFINITY;
      for (int64_t c = 0; c < classes; ++c)
        if (!std::isnan(row[c])) max = std::max(max, row[c]);
      double total = 0.0;
      for (int64_t c = 0; c < classes; ++c) {
        total += (std::isnan(row[c]) || std::isinf(max)) ? 0.0 : std::exp(row[c] - max);
        cdf[c] = total;
      }
      if (!(total > 0.0) && sample_size_ > 0) ctx.Fail(StrCat("row ", b, " has no finite log-probability"));
      for (int64_t s = 0; s < sample_size_; ++s) {
        const double u = stream.Uniform() * total;
        int64_t k = std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin();
        k = std::min(k, classes - 1);
        if (dtype_ == DataType::kInt64) out.data<int64_t>()[b * sample_size_ + s] = k;
        else out.data<int32_t>()[b * sample_size_ + s] = static_cast<int32_t>(k);
      }
    }
  }

 private:
  SeedSpec seed_;
  int64_t sample_size_ = 1;
  DataType dtype_ = DataType::kInt32;
};

using RandomUniform = RandomTensor<Distribution::kUniform, false>;
using RandomNormal = RandomTensor<Distribution::kNormal, false>;
using RandomUniformLike = RandomTensor<Distribution::kUniform, true>;
using RandomNormalLike = RandomTensor<Distribution::kNormal, true>;

ONYX_CPU_KERNEL("RandomUniform", 1, 21, RandomUniform);
ONYX_CPU_KERNEL("RandomUniform", 22, kOpsetMax, RandomUniform);
ONYX_CPU_KERNEL("RandomNormal", 1, 21, RandomNormal);
ONYX_CPU_KERNEL("RandomNormal", 22, kOpsetMax, RandomNormal);
ONYX_CPU_KERNEL("RandomUniformLike", 1, 21, RandomUniformLike);
ONYX_CPU_KERNEL("RandomUniformLike", 22, kOpsetMax, RandomUniformLike);
ONYX_CPU_KERNEL("RandomNormalLike", 1, 21, RandomNormalLike);
ONYX_CPU_KERNEL("RandomNormalLike", 22, kOpsetMax, RandomNormalLike);
ONYX_CPU_KERNEL("Bernoulli", 15, 21, Bernoulli);
ONYX_CPU_KERNEL("Bernoulli", 22, kOpsetMax, Bernoulli);
ONYX_CPU_KERNEL("Multinomial", 7, 21, Multinomial);
ONYX_CPU_KERNEL("Multinomial", 22, kOpsetMax, Multinomial);

}  // namespace
}  // namespace onyx
