#include "providers/cpu/kernels/contrib/float_compute.h"

#include "base/float_types.h"
#include "base/str_cat.h"

namespace onyx::contrib {
namespace {

bool IsHalf(DataType dt) { return dt == DataType::kFloat16 || dt == DataType::kBFloat16; }

}  // namespace

bool HasHalfInputs(const KernelContext& ctx) {
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Value* v = ctx.input_value(i);
    if (v && v->is_tensor() && IsHalf(v->tensor().dtype())) return true;
  }
  return false;
}

DataType CommonInputType(const KernelContext& ctx, std::initializer_list<size_t> inputs) {
  DataType common = DataType::kUndefined;
  for (size_t i : inputs) {
    const Tensor* t = i < ctx.num_inputs() ? ctx.input(i) : nullptr;
    if (t == nullptr) continue;
    if (common == DataType::kUndefined) common = t->dtype();
    else if (t->dtype() != common)
      ctx.Fail(StrCat("input ", i, " is ", DataTypeName(t->dtype()), " but the other float inputs are ",
                      DataTypeName(common), ": they must share one type"));
  }
  return common;
}

FloatComputeContext::FloatComputeContext(KernelContext& outer)
    : outer_(outer), widened_(outer.num_inputs()), float_outputs_(outer.num_outputs()) {
  for (size_t i = 0; i < outer.num_inputs(); ++i) {
    const Value* v = outer.input_value(i);
    if (!v || !v->is_tensor() || !IsHalf(v->tensor().dtype())) continue;
    const Tensor& t = v->tensor();
    Tensor f(DataType::kFloat, t.shape());
    float* dst = f.data<float>();
    if (t.dtype() == DataType::kFloat16)
      for (int64_t k = 0; k < t.size(); ++k) dst[k] = static_cast<float>(t.data<Float16>()[k]);
    else
      for (int64_t k = 0; k < t.size(); ++k) dst[k] = static_cast<float>(t.data<BFloat16>()[k]);
    widened_[i] = Value(std::move(f));
  }
}

const Value* FloatComputeContext::input_value(size_t i) const {
  return i < widened_.size() && widened_[i] ? &*widened_[i] : outer_.input_value(i);
}

Tensor& FloatComputeContext::AllocateOutput(size_t i, DataType dtype, const Shape& shape) {
  if (dtype != DataType::kFloat || i >= float_outputs_.size()) return outer_.AllocateOutput(i, dtype, shape);
  float_outputs_[i] = Tensor(DataType::kFloat, shape);
  return *float_outputs_[i];
}

void FloatComputeContext::Finish(DataType dtype) {
  for (size_t i = 0; i < float_outputs_.size(); ++i) {
    if (!float_outputs_[i]) continue;
    const Tensor& f = *float_outputs_[i];
    Tensor& out = outer_.AllocateOutput(i, dtype, f.shape());
    const float* src = f.data<float>();
    if (dtype == DataType::kFloat16)
      for (int64_t k = 0; k < f.size(); ++k) out.data<Float16>()[k] = Float16(src[k]);
    else if (dtype == DataType::kBFloat16)
      for (int64_t k = 0; k < f.size(); ++k) out.data<BFloat16>()[k] = BFloat16(src[k]);
    else
      std::copy(src, src + f.size(), out.data<float>());
  }
}

}  // namespace onyx::contrib
