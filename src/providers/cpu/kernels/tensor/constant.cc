// Generators: Constant (every value_* attribute and sparse_value), ConstantOfShape, EyeLike and
// Range. Constant builds its tensor once and hands out the same immutable value every run.
#include <algorithm>
#include <cmath>

#include "providers/cpu/kernels/tensor/tensor_util.h"

namespace onyx {
namespace tensor_kernels {
namespace {

using NumericAndBool = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                                uint16_t, uint32_t, uint64_t, bool>;

class Constant final : public OpKernel {
 public:
  explicit Constant(const KernelInfo& info) {
    int found = 0;
    if (const ir::Attribute* a = info.FindAttr("value")) {
      value_ = a->t;
      ++found;
    }
    if (const ir::Attribute* a = info.FindAttr("sparse_value")) {  // made dense by the loader
      value_ = a->t;
      ++found;
    }
    if (info.HasAttr("value_float")) {
      value_ = Tensor::Scalar<float>(DataType::kFloat, info.GetFloat("value_float"));
      ++found;
    }
    if (info.HasAttr("value_floats")) {
      const auto v = info.GetFloats("value_floats");
      value_ = Tensor::FromVector<float>(DataType::kFloat, {static_cast<int64_t>(v.size())}, v);
      ++found;
    }
    if (info.HasAttr("value_int")) {
      value_ = Tensor::Scalar<int64_t>(DataType::kInt64, info.GetInt("value_int"));
      ++found;
    }
    if (info.HasAttr("value_ints")) {
      const auto v = info.GetInts("value_ints");
      value_ = Tensor::FromVector<int64_t>(DataType::kInt64, {static_cast<int64_t>(v.size())}, v);
      ++found;
    }
    if (info.HasAttr("value_string")) {
      value_ = Tensor(DataType::kString, {});
      *value_.data<std::string>() = info.GetString("value_string");
      ++found;
    }
    if (info.HasAttr("value_strings")) {
      const auto v = info.GetStrings("value_strings");
      value_ = Tensor::FromVector<std::string>(DataType::kString, {static_cast<int64_t>(v.size())}, v);
      ++found;
    }
    if (found != 1) info.Fail(StrCat("needs exactly one value attribute, got ", found));
    if (!value_.defined()) info.Fail("the value attribute holds no tensor");
  }

  void Compute(KernelContext& ctx) const override { ctx.SetOutput(0, Value(value_)); }

 private:
  Tensor value_;
};

class ConstantOfShape final : public OpKernel {
 public:
  explicit ConstantOfShape(const KernelInfo& info) {
    if (const ir::Attribute* a = info.FindAttr("value")) {
      if (a->t.size() != 1) info.Fail(StrCat("value must hold exactly one element, got ", a->t.Describe()));
      value_ = a->t;
    } else {
      value_ = Tensor::Scalar<float>(DataType::kFloat, 0.0f);
    }
  }

  void Compute(KernelContext& ctx) const override {
    const std::vector<int64_t> shape = ReadInts(ctx, ctx.required_input(0), "shape");
    for (int64_t d : shape)
      if (d < 0) ctx.Fail(StrCat("shape [", StrJoin(shape), "] has a negative dim"));
    Tensor& y = ctx.AllocateOutput(0, value_.dtype(), shape);
    if (y.size() == 0) return;
    if (IsSubByte(value_.dtype())) {
      Tensor bytes(DataType::kUInt8, shape);
      FillN(bytes.data<uint8_t>(), UnpackSubByte(value_).data<uint8_t>()[0], bytes.size());
      PackSubByte(bytes, y);
      return;
    }
    DispatchBySize(ctx, value_.dtype(), [&](auto tag) {
      using U = typename decltype(tag)::type;
      FillN(y.data<U>(), *value_.data<U>(), y.size());
    });
  }

 private:
  Tensor value_;
};

// EyeLike: a 2-D tensor of zeros with ones on diagonal k, of the `dtype` attribute's type or
// the input's.
class EyeLike final : public OpKernel {
 public:
  explicit EyeLike(const KernelInfo& info) : k_(info.GetIntOr("k", 0)) {
    if (info.HasAttr("dtype")) {
      const int64_t dt = info.GetInt("dtype");
      if (!IsValidDataType(static_cast<int32_t>(dt)) || dt == 0) info.Fail(StrCat("dtype ", dt, " is not valid"));
      dtype_ = static_cast<DataType>(dt);
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    if (x.rank() != 2) ctx.Fail("input must be 2-D");
    const DataType dt = dtype_ == DataType::kUndefined ? x.dtype() : dtype_;
    Tensor& y = ctx.AllocateOutput(0, dt, x.shape());
    const int64_t rows = x.dim(0), cols = x.dim(1);
    const int64_t k = std::clamp<int64_t>(k_, -rows - 1, cols + 1);  // beyond that no diagonal is left
    Dispatch(NumericAndBool{}, dt, ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* p = y.data<T>();
      if (y.size() > 0) std::memset(static_cast<void*>(p), 0, static_cast<size_t>(y.byte_size()));
      T one;
      if constexpr (std::is_same_v<T, bool>) one = true;
      else one = FromCompute<T>(ComputeType<T>(1));
      for (int64_t i = std::max<int64_t>(0, -k); i < rows && i + k < cols; ++i) p[i * cols + i + k] = one;
    });
  }

 private:
  int64_t k_;
  DataType dtype_ = DataType::kUndefined;
};

// Range: start, start + delta, ... up to (excluding) limit; max(ceil((limit - start) / delta), 0)
// elements. Float16/BFloat16 compute in float.
class Range final : public OpKernel {
 public:
  explicit Range(const KernelInfo&) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& start = ctx.required_input(0);
    const Tensor& limit = ctx.required_input(1);
    const Tensor& delta = ctx.required_input(2);
    for (const Tensor* t : {&start, &limit, &delta}) {
      if (t->size() != 1) ctx.Fail("start, limit and delta must be scalars");
      if (t->dtype() != start.dtype()) ctx.Fail("start, limit and delta must have the same element type");
    }
    Dispatch(NumericTypes{}, start.dtype(), ctx.node(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      const C s = ToCompute(*start.data<T>()), l = ToCompute(*limit.data<T>()), d = ToCompute(*delta.data<T>());
      if (d == C(0)) ctx.Fail("delta must not be 0");
      int64_t n = 0;
      if constexpr (std::is_integral_v<C>) {
        const __int128 diff = static_cast<__int128>(l) - static_cast<__int128>(s);
        const __int128 step = d;
        __int128 count = diff / step;
        if (count * step != diff) ++count;  // ceil for same-signed diff/step
        if (count > 0) n = static_cast<int64_t>(std::min<__int128>(count, INT64_MAX));
      } else {
        const double count = std::ceil((static_cast<double>(l) - static_cast<double>(s)) / static_cast<double>(d));
        if (!std::isfinite(count) || count > 1e18) ctx.Fail("start, limit and delta give too many (or infinitely many) elements");
        if (count > 0) n = static_cast<int64_t>(count);
      }
      Tensor& y = ctx.AllocateOutput(0, start.dtype(), {n});
      T* p = y.data<T>();
      for (int64_t i = 0; i < n; ++i) p[i] = FromCompute<T>(static_cast<C>(s + static_cast<C>(i) * d));
    });
  }
};

ONYX_CPU_KERNEL("Constant", 1, 8, Constant);     // value
ONYX_CPU_KERNEL("Constant", 9, 10, Constant);
ONYX_CPU_KERNEL("Constant", 11, 11, Constant);   // + sparse_value
ONYX_CPU_KERNEL("Constant", 12, kOpsetMax, Constant);  // + value_float(s) / int(s) / string(s)
ONYX_CPU_KERNEL("ConstantOfShape", 9, kOpsetMax, ConstantOfShape);
ONYX_CPU_KERNEL("EyeLike", 9, kOpsetMax, EyeLike);
ONYX_CPU_KERNEL("Range", 11, kOpsetMax, Range);

}  // namespace
}  // namespace tensor_kernels
}  // namespace onyx
