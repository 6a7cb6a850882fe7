// Dropout. In inference (opsets before 12, or training_mode false/absent, or ratio 0) the output
// is the input itself and the mask is all true. With training_mode, each element is kept when a
// uniform draw in [0, 1) is >= ratio and scaled by 1 / (1 - ratio). The draws come from MT19937
// seeded with `seed` and turned into doubles as numpy's legacy RandomState does, so a given
// seed reproduces numpy's (and ONNX's reference) masks; without a seed each run draws a fresh one.
#include <random>

#include "providers/cpu/kernels/tensor/tensor_util.h"

namespace onyx {
namespace tensor_kernels {
namespace {

// numpy's random_sample: 53 random bits from two 32-bit draws.
inline double NextDouble(std::mt19937& gen) {
  const uint32_t a = gen() >> 5, b = gen() >> 6;
  return (a * 67108864.0 + b) / 9007199254740992.0;
}

class Dropout final : public OpKernel {
 public:
  explicit Dropout(const KernelInfo& info) : opset_(info.opset()) {
    has_seed_ = info.HasAttr("seed");
    seed_ = info.GetIntOr("seed", 0);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    bool training = false;
    double ratio = 0.5;
    if (opset_ >= 12) {
      if (const Tensor* t = ctx.input(2)) {
        if (t->dtype() != DataType::kBool || t->size() != 1) ctx.Fail("training_mode must be a bool scalar");
        training = *t->data<bool>();
      }
      if (const Tensor* r = ctx.input(1)) {
        if (r->size() != 1) ctx.Fail("ratio must be a scalar");
        Dispatch(FloatTypes{}, r->dtype(), ctx.node(),
                 [&](auto tag) { ratio = static_cast<double>(ToCompute(*r->data<typename decltype(tag)::type>())); });
      }
      if (training && !(ratio >= 0.0 && ratio < 1.0)) ctx.Fail(StrCat("ratio ", ratio, " is outside [0, 1)"));
    }
    const bool drop = training && ratio > 0.0;
    // Opsets 7-9 give the mask the data's type; 10+ bool (1 and 6 have no typed mask: use T).
    const DataType mask_type = opset_ >= 10 ? DataType::kBool : x.dtype();
    if (!drop) {
      ctx.SetOutput(0, Value(x));
      if (ctx.num_outputs() > 1 && ctx.has_output(1)) {
        Tensor& mask = ctx.AllocateOutput(1, mask_type, x.shape());
        FillMask(ctx, mask, nullptr);
      }
      return;
    }
    std::mt19937 gen(has_seed_ ? static_cast<uint32_t>(seed_) : std::random_device{}());
    std::vector<uint8_t> keep(static_cast<size_t>(x.size()));
    for (auto& k : keep) k = NextDouble(gen) >= ratio;
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.shape());
    Dispatch(FloatTypes{}, x.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      const C scale = static_cast<C>(1.0 / (1.0 - ratio));
      const T* in = x.data<T>();
      T* out = y.data<T>();
      for (int64_t i = 0; i < x.size(); ++i)
        out[i] = keep[static_cast<size_t>(i)] ? FromCompute<T>(ToCompute(in[i]) * scale) : FromCompute<T>(C(0));
    });
    if (ctx.num_outputs() > 1 && ctx.has_output(1)) {
      Tensor& mask = ctx.AllocateOutput(1, mask_type, x.shape());
      FillMask(ctx, mask, keep.data());
    }
  }

 private:
  // Mask of ones (keep == null) or of `keep`.
  static void FillMask(const KernelContext& ctx, Tensor& mask, const uint8_t* keep) {
    if (mask.dtype() == DataType::kBool) {
      bool* m = mask.data<bool>();
      for (int64_t i = 0; i < mask.size(); ++i) m[i] = keep == nullptr || keep[i] != 0;
      return;
    }
    Dispatch(NumericTypes{}, mask.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* m = mask.data<T>();
      for (int64_t i = 0; i < mask.size(); ++i)
        m[i] = FromCompute<T>(ComputeType<T>(keep == nullptr || keep[i] != 0 ? 1 : 0));
    });
  }

  int opset_;
  bool has_seed_ = false;
  int64_t seed_ = 0;
};

ONYX_CPU_KERNEL("Dropout", 1, 5, Dropout);     // is_test attribute (inference either way)
ONYX_CPU_KERNEL("Dropout", 6, 6, Dropout);
ONYX_CPU_KERNEL("Dropout", 7, 9, Dropout);     // ratio attribute, mask of type T
ONYX_CPU_KERNEL("Dropout", 10, 11, Dropout);   // bool mask
ONYX_CPU_KERNEL("Dropout", 12, kOpsetMax, Dropout);  // ratio / training_mode inputs, seed

}  // namespace
}  // namespace tensor_kernels
}  // namespace onyx
